/*
 * schema_meta.c — the schemas toolgate knows without being given them:
 * the draft-07 meta-schema (http://json-schema.org/draft-07/schema), so
 * that a schema may $ref it, as a tool that takes a schema as an argument
 * would. Its text is the one json-schema.org publishes, without spaces.
 */
#include <string.h>
#include "schema_int.h"

static const char DRAFT07[] =
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"$id\":\"http:"
    "//json-schema.org/draft-07/schema#\",\"title\":\"Core schema meta-schema"
    "\",\"definitions\":{\"schemaArray\":{\"type\":\"array\",\"minItems\":1,"
    "\"items\":{\"$ref\":\"#\"}},\"nonNegativeInteger\":{\"type\":\"integer\""
    ",\"minimum\":0},\"nonNegativeIntegerDefault0\":{\"allOf\":[{\"$ref\":\"#"
    "/definitions/nonNegativeInteger\"},{\"default\":0}]},\"simpleTypes\":{\""
    "enum\":[\"array\",\"boolean\",\"integer\",\"null\",\"number\",\"object\""
    ",\"string\"]},\"stringArray\":{\"type\":\"array\",\"items\":{\"type\":\""
    "string\"},\"uniqueItems\":true,\"default\":[]}},\"type\":[\"object\",\"b"
    "oolean\"],\"properties\":{\"$id\":{\"type\":\"string\",\"format\":\"uri-"
    "reference\"},\"$schema\":{\"type\":\"string\",\"format\":\"uri\"},\"$ref"
    "\":{\"type\":\"string\",\"format\":\"uri-reference\"},\"$comment\":{\"ty"
    "pe\":\"string\"},\"title\":{\"type\":\"string\"},\"description\":{\"type"
    "\":\"string\"},\"default\":true,\"readOnly\":{\"type\":\"boolean\",\"def"
    "ault\":false},\"examples\":{\"type\":\"array\",\"items\":true},\"multipl"
    "eOf\":{\"type\":\"number\",\"exclusiveMinimum\":0},\"maximum\":{\"type\""
    ":\"number\"},\"exclusiveMaximum\":{\"type\":\"number\"},\"minimum\":{\"t"
    "ype\":\"number\"},\"exclusiveMinimum\":{\"type\":\"number\"},\"maxLength"
    "\":{\"$ref\":\"#/definitions/nonNegativeInteger\"},\"minLength\":{\"$ref"
    "\":\"#/definitions/nonNegativeIntegerDefault0\"},\"pattern\":{\"type\":"
    "\"string\",\"format\":\"regex\"},\"additionalItems\":{\"$ref\":\"#\"},\""
    "items\":{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#/definitions/schemaArr"
    "ay\"}],\"default\":true},\"maxItems\":{\"$ref\":\"#/definitions/nonNegat"
    "iveInteger\"},\"minItems\":{\"$ref\":\"#/definitions/nonNegativeIntegerD"
    "efault0\"},\"uniqueItems\":{\"type\":\"boolean\",\"default\":false},\"co"
    "ntains\":{\"$ref\":\"#\"},\"maxProperties\":{\"$ref\":\"#/definitions/no"
    "nNegativeInteger\"},\"minProperties\":{\"$ref\":\"#/definitions/nonNegat"
    "iveIntegerDefault0\"},\"required\":{\"$ref\":\"#/definitions/stringArray"
    "\"},\"additionalProperties\":{\"$ref\":\"#\"},\"definitions\":{\"type\":"
    "\"object\",\"additionalProperties\":{\"$ref\":\"#\"},\"default\":{}},\"p"
    "roperties\":{\"type\":\"object\",\"additionalProperties\":{\"$ref\":\"#"
    "\"},\"default\":{}},\"patternProperties\":{\"type\":\"object\",\"additio"
    "nalProperties\":{\"$ref\":\"#\"},\"propertyNames\":{\"format\":\"regex\""
    "},\"default\":{}},\"dependencies\":{\"type\":\"object\",\"additionalProp"
    "erties\":{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#/definitions/stringAr"
    "ray\"}]}},\"propertyNames\":{\"$ref\":\"#\"},\"const\":true,\"enum\":{\""
    "type\":\"array\",\"items\":true},\"type\":{\"anyOf\":[{\"$ref\":\"#/defi"
    "nitions/simpleTypes\"},{\"type\":\"array\",\"items\":{\"$ref\":\"#/defin"
    "itions/simpleTypes\"},\"minItems\":1,\"uniqueItems\":true}]},\"format\":"
    "{\"type\":\"string\"},\"contentMediaType\":{\"type\":\"string\"},\"conte"
    "ntEncoding\":{\"type\":\"string\"},\"if\":{\"$ref\":\"#\"},\"then\":{\"$"
    "ref\":\"#\"},\"else\":{\"$ref\":\"#\"},\"allOf\":{\"$ref\":\"#/definitio"
    "ns/schemaArray\"},\"anyOf\":{\"$ref\":\"#/definitions/schemaArray\"},\"o"
    "neOf\":{\"$ref\":\"#/definitions/schemaArray\"},\"not\":{\"$ref\":\"#\"}"
    "},\"default\":true}";

const char *tg__sc_builtin(const char *uri) {
  if (!strcmp(uri, "http://json-schema.org/draft-07/schema") ||
      !strcmp(uri, "https://json-schema.org/draft-07/schema"))
    return DRAFT07;
  return NULL;
}
