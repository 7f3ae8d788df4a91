import type { ErrorObject } from "ajv";
import { literal } from "./schema-text.js";

function where(e: ErrorObject): string {
  return e.instancePath ? e.instancePath.slice(1).replace(/\//g, ".") : "arguments";
}

function line(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "enum":
      return `${where(e)} must be one of ${(params.allowedValues as unknown[]).map(literal).join(", ")}`;
    case "const":
      return `${where(e)} must be ${literal(params.allowedValue)}`;
    case "required":
      return `${e.instancePath ? `${where(e)}.` : ""}${String(params.missingProperty)} is required`;
    case "additionalProperties":
      return `${where(e)} has no field ${String(params.additionalProperty)}`;
    case "type":
      return `${where(e)} must be ${String(params.type)}`;
    default:
      return `${where(e)} ${e.message ?? "is invalid"}`;
  }
}

/** A validation failure in words a person can act on: the field, and for enums the allowed values. */
export function validationProblem(errors: ErrorObject[]): string {
  // anyOf/oneOf add a summary error after their branches' errors; the branches say more.
  const useful = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf" && e.keyword !== "if");
  return [...new Set((useful.length > 0 ? useful : errors).map(line))].slice(0, 3).join("; ");
}
