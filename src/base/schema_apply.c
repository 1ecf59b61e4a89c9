/*
 * schema_apply.c — the keywords that apply other schemas to the same
 * value: $ref, $dynamicRef, dependentSchemas, allOf, anyOf, oneOf, not,
 * if/then/else; and unevaluatedItems / unevaluatedProperties, which see
 * what all of those evaluated.
 *
 * Evaluated members are tracked only where an unevaluated* keyword will
 * look: a node that has one collects into a set of its own (one bit per
 * member of the value), and each schema it applies in place fills a fresh
 * set that is merged in only when that schema passed — annotations of a
 * failed branch do not count. Without unevaluated* nothing is tracked and
 * anyOf stops at the first branch that passes.
 */
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

/* ---- evaluated sets ------------------------------------------------------ */

size_t tg__sc_count_children(const cJSON *v) {
  size_t n = 0;
  for (const cJSON *e = v->child; e; e = e->next) n++;
  return n;
}

int tg__sc_evalset_init(sc_vctx *c, sc_evalset *e, size_t n) {
  size_t words = (n + 63) / 64;
  e->n = n;
  e->bits = e->inline_bits;
  memset(e->inline_bits, 0, sizeof e->inline_bits);
  if (words <= sizeof e->inline_bits / sizeof e->inline_bits[0]) return 0;
  if (!(e->bits = calloc(words, sizeof *e->bits))) {
    c->oom = 1;
    return -1;
  }
  return 0;
}

void tg__sc_evalset_free(sc_evalset *e) {
  if (e->bits != e->inline_bits) free(e->bits);
}

void tg__sc_evalset_mark(sc_evalset *e, size_t i) {
  if (i < e->n) e->bits[i / 64] |= (uint64_t)1 << (i % 64);
}

int tg__sc_evalset_has(const sc_evalset *e, size_t i) {
  return i < e->n && (e->bits[i / 64] >> (i % 64)) & 1;
}

void tg__sc_evalset_merge(sc_evalset *dst, const sc_evalset *src) {
  for (size_t w = 0; w < (dst->n + 63) / 64; w++) dst->bits[w] |= src->bits[w];
}

/* ---- in place ------------------------------------------------------------ */

/* s applied to v itself; what it evaluated joins ev when it passed. */
static int inplace(sc_vctx *c, const sc_node *s, const cJSON *v,
                   const seg *at, sc_evalset *ev) {
  if (!ev) return tg__sc_validate(c, s, v, at, NULL);
  sc_evalset sub;
  if (tg__sc_evalset_init(c, &sub, ev->n) < 0) return 0;
  int ok = tg__sc_validate(c, s, v, at, &sub);
  if (ok) tg__sc_evalset_merge(ev, &sub);
  tg__sc_evalset_free(&sub);
  return ok;
}

static int quiet(sc_vctx *c, const sc_node *s, const cJSON *v, const seg *at,
                 sc_evalset *ev) {
  c->quiet++;
  int ok = inplace(c, s, v, at, ev);
  c->quiet--;
  return ok;
}

/* $dynamicRef: when its target is a $dynamicAnchor, the outermost
 * resource of the dynamic scope with a $dynamicAnchor of that name. */
static const sc_node *dynamic_target(const sc_vctx *c, const sc_node *n) {
  const sc_node *t = n->dyn_ref;
  if (!n->dyn_anchor) return t;
  for (const sc_scope_link *l = c->scope; l; l = l->up)
    for (const sc_anchor *a = l->res->anchors; a; a = a->next)
      if (a->dynamic && !strcmp(a->name, n->dyn_anchor)) t = a->node;
  return t;
}

static int refs(sc_vctx *c, const sc_node *n, const cJSON *v, const seg *at,
                sc_evalset *ev) {
  int ok = 1;
  if (n->ref) ok = inplace(c, n->ref, v, at, ev);
  if ((ok || !tg__sc_stop(c)) && n->dyn_ref)
    ok &= inplace(c, dynamic_target(c, n), v, at, ev);
  return ok;
}

static int dependent_schemas(sc_vctx *c, const sc_node *n, const cJSON *v,
                             const seg *at, sc_evalset *ev) {
  int ok = 1;
  if (!cJSON_IsObject(v)) return 1;
  for (size_t d = 0; d < n->ndep_sch && (ok || !tg__sc_stop(c)); d++)
    if (cJSON_GetObjectItemCaseSensitive(v, n->dep_sch[d].name))
      ok &= inplace(c, n->dep_sch[d].node, v, at, ev);
  return ok;
}

/* allOf tells the failing branch itself; anyOf and oneOf try each branch
 * quietly and tell only the count. */
static int all_of(sc_vctx *c, const sc_node *n, const cJSON *v,
                  const seg *at, sc_evalset *ev) {
  int ok = 1;
  for (size_t i = 0; i < n->all_of.n && (ok || !tg__sc_stop(c)); i++)
    ok &= inplace(c, n->all_of.v[i], v, at, ev);
  return ok;
}

static int any_of(sc_vctx *c, const sc_node *n, const cJSON *v,
                  const seg *at, sc_evalset *ev) {
  int any = 0;
  for (size_t i = 0; i < n->any_of.n && (!any || ev); i++)
    any |= quiet(c, n->any_of.v[i], v, at, ev);
  if (any || c->oom) return any;
  return tg__sc_fail_msg(c, at, "anyOf", "matches none of anyOf");
}

static int one_of(sc_vctx *c, const sc_node *n, const cJSON *v,
                  const seg *at, sc_evalset *ev) {
  size_t passed = 0;
  for (size_t i = 0; i < n->one_of.n; i++)
    passed += (size_t)quiet(c, n->one_of.v[i], v, at, ev);
  if (passed == 1 || c->oom) return passed == 1;
  if (!passed) return tg__sc_fail_msg(c, at, "oneOf", "matches none of oneOf");
  sc_out *o = tg__sc_fail(c, at, "oneOf");
  tg__sc_str(o, "matches ");
  tg__sc_size(o, passed);
  tg__sc_str(o, " of oneOf (exactly one expected)");
  return tg__sc_fail_end(c);
}

static int not_(sc_vctx *c, const sc_node *n, const cJSON *v,
                const seg *at) {
  if (!quiet(c, n->not_, v, at, NULL) || c->oom) return !c->oom;
  return tg__sc_fail_msg(c, at, "not", "must not match the schema in 'not'");
}

static int if_then_else(sc_vctx *c, const sc_node *n, const cJSON *v,
                        const seg *at, sc_evalset *ev) {
  int cond = quiet(c, n->if_, v, at, ev);
  if (c->oom) return 0;
  const sc_node *next = cond ? n->then_ : n->else_;
  return next ? inplace(c, next, v, at, ev) : 1;
}

/* ---- unevaluated ---------------------------------------------------------- */

static int unevaluated(sc_vctx *c, const sc_node *n, const cJSON *v,
                       const seg *at, sc_evalset *ev) {
  int array = cJSON_IsArray(v);
  const sc_node *s = array ? n->uneval_items : n->uneval_props;
  if (!s || !(array || cJSON_IsObject(v))) return 1;
  const char *kw = array ? "unevaluatedItems" : "unevaluatedProperties";
  int ok = 1;
  size_t i = 0;
  for (const cJSON *e = v->child; e && (ok || !tg__sc_stop(c)); e = e->next, i++) {
    if (tg__sc_evalset_has(ev, i)) continue;
    seg es = array ? tg__sc_index(at, i) : tg__sc_key(at, e->string);
    if (s->kind == SC_KIND_FALSE) {
      sc_out *o = tg__sc_fail(c, &es, kw);
      tg__sc_str(o, array ? "item" : "property");
      tg__sc_str(o, " not allowed (");
      tg__sc_str(o, kw);
      tg__sc_str(o, " is false)");
      ok &= tg__sc_fail_end(c);
    } else {
      ok &= tg__sc_validate(c, s, e, &es, NULL);
    }
  }
  if (ok) tg__sc_evalset_mark_from(ev, 0);
  return ok;
}

void tg__sc_evalset_mark_from(sc_evalset *e, size_t from) {
  for (size_t i = from; i < e->n; i++) tg__sc_evalset_mark(e, i);
}

int tg__sc_apply(sc_vctx *c, const sc_node *n, const cJSON *v, const seg *at,
                 sc_evalset *ev) {
  int ok = 1;
  if ((n->ref || n->dyn_ref) && !(ok &= refs(c, n, v, at, ev)) &&
      tg__sc_stop(c))
    return 0;
  if (n->ndep_sch && !(ok &= dependent_schemas(c, n, v, at, ev)) &&
      tg__sc_stop(c))
    return 0;
  if (n->all_of.n && !(ok &= all_of(c, n, v, at, ev)) && tg__sc_stop(c))
    return 0;
  if (n->any_of.n && !(ok &= any_of(c, n, v, at, ev)) && tg__sc_stop(c))
    return 0;
  if (n->one_of.n && !(ok &= one_of(c, n, v, at, ev)) && tg__sc_stop(c))
    return 0;
  if (n->not_ && !(ok &= not_(c, n, v, at)) && tg__sc_stop(c)) return 0;
  if (n->if_ && !(ok &= if_then_else(c, n, v, at, ev)) && tg__sc_stop(c))
    return 0;
  /* last: it sees what every keyword before it evaluated */
  if ((n->groups & SC_G_UNEVAL) && ok) ok &= unevaluated(c, n, v, at, ev);
  return ok;
}
