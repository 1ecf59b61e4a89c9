/* error.c — owned structured errors (error.h). */
#include <stdlib.h>
#include <string.h>
#include "error.h"

void tg__err_clear(tg_err *e) {
  free(e->code);
  free(e->message);
  free(e->suggestion);
  memset(e, 0, sizeof *e);
}
