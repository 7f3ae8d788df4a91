import type { Ajv, ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { libraryLogger } from "../core/library-log.js";
import { SchemaDialects } from "../core/schema-dialects.js";
import type { HistoryEntry, MissingArg } from "../sessions/session.js";
import { describeSchema } from "./schema-text.js";
import { validationProblem } from "./validation-text.js";

/** What the bot knows when it fills a tool's arguments (DESIGN §5). */
export interface FillContext {
  question?: string;
  userId: string;
  conversationId: string;
  history: HistoryEntry[];
}

interface PropertySchema {
  type?: string | string[];
  description?: string;
  items?: unknown;
}

const QUESTION_NAMES = ["question", "query", "q", "text", "prompt"];
const USER_NAMES = ["user", "user_id"];
const SESSION_NAMES = ["session", "session_id", "conversation_id"];

/** Arguments the bot fills from who and where the person is; nobody may set them (DESIGN §5). */
export const IDENTITY_ARGUMENTS: readonly string[] = [...USER_NAMES, ...SESSION_NAMES];
const CONTEXT_NAMES = ["context", "history"];

/** Whether a tool takes the recent turns (a `context` or `history` argument), so the history is worth reading. */
export function takesHistory(inputSchema: Record<string, unknown>): boolean {
  const props = properties(inputSchema);
  return CONTEXT_NAMES.some((name) => name in props);
}

function properties(schema: Record<string, unknown>): Record<string, PropertySchema> {
  const props = schema.properties;
  return props && typeof props === "object" ? (props as Record<string, PropertySchema>) : {};
}

function required(schema: Record<string, unknown>): string[] {
  return Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
}

function typeOf(prop: PropertySchema | undefined): string | undefined {
  const t = prop?.type;
  return Array.isArray(t) ? t.find((x) => x !== "null") : t;
}

/**
 * Fills the arguments the bot can know from a tool's input schema, keeping any given
 * explicitly, and lists the required ones it still has to ask the person for.
 */
export function fillArguments(
  inputSchema: Record<string, unknown>,
  context: FillContext,
  explicit: Record<string, unknown> = {},
): { args: Record<string, unknown>; missing: MissingArg[] } {
  const props = properties(inputSchema);
  const args: Record<string, unknown> = { ...explicit };
  const put = (names: string[], value: unknown) => {
    for (const name of names) {
      if (name in props && !(name in args) && value !== undefined) {
        args[name] = value;
        return;
      }
    }
  };
  if (context.question !== undefined && context.question !== "") put(QUESTION_NAMES, context.question);
  // Identity is never taken from what was given: whatever a caller put there is replaced.
  for (const name of IDENTITY_ARGUMENTS) delete args[name];
  put(USER_NAMES, context.userId);
  put(SESSION_NAMES, context.conversationId);
  for (const name of CONTEXT_NAMES) {
    if (!(name in props) || name in args || context.history.length === 0) continue;
    const t = typeOf(props[name]);
    if (t === "array") args[name] = context.history.map(({ role, text }) => ({ role, text }));
    else if (t === "string" || t === undefined) {
      args[name] = context.history.map((e) => `${e.role}: ${e.text}`).join("\n");
    }
    break;
  }
  const missing = required(inputSchema)
    .filter((name) => !(name in args))
    .map((name) => ({ name, description: props[name]?.description, type: typeOf(props[name]) }));
  return { args, missing };
}

/** Turns what a person typed for one argument into a value of the argument's type. */
export function coerceArgument(
  text: string,
  type: string | undefined,
): { ok: true; value: unknown } | { ok: false } {
  const trimmed = text.trim();
  switch (type) {
    case "number":
    case "integer": {
      const n = Number(trimmed);
      if (trimmed === "" || !Number.isFinite(n) || (type === "integer" && !Number.isInteger(n)))
        return { ok: false };
      return { ok: true, value: n };
    }
    case "boolean": {
      const yes = ["true", "yes", "y", "1", "on"];
      const no = ["false", "no", "n", "0", "off"];
      if (yes.includes(trimmed.toLowerCase())) return { ok: true, value: true };
      if (no.includes(trimmed.toLowerCase())) return { ok: true, value: false };
      return { ok: false };
    }
    case "array":
    case "object":
      try {
        return { ok: true, value: JSON.parse(trimmed) };
      } catch {
        return { ok: false };
      }
    default:
      return { ok: true, value: text };
  }
}

/** Converts `key=value` strings to values of the types the schema declares. */
export function coerceKeyValues(
  inputSchema: Record<string, unknown>,
  pairs: Record<string, string>,
): { args: Record<string, unknown>; bad?: string } {
  const props = properties(inputSchema);
  const args: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(pairs)) {
    const result = coerceArgument(raw, typeOf(props[key]));
    if (!result.ok) return { args, bad: `${key} should be ${typeOf(props[key])}, not "${raw}"` };
    args[key] = result.value;
  }
  return { args };
}

// ajv-formats knows "uri", "email", "date-time"…; a format it does not know is
// logged (not printed), since servers may use any format name they like.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new SchemaDialects({ allErrors: true, strict: false, logger: libraryLogger("ajv") }, (each) =>
  addFormats(each as Ajv),
);
const validators = new WeakMap<object, ValidateFunction>();

/** Validates arguments against a tool's input schema; returns a readable problem or undefined. */
export function validateArguments(
  inputSchema: Record<string, unknown>,
  args: Record<string, unknown>,
): string | undefined {
  let validate = validators.get(inputSchema);
  if (!validate) {
    try {
      validate = ajv.compile(inputSchema);
    } catch {
      // A schema ajv cannot compile is the server's problem; the server validates too.
      return undefined;
    }
    validators.set(inputSchema, validate);
  }
  if (validate(args)) return undefined;
  return validationProblem(validate.errors ?? []);
}

/** Names of the input schema's properties, for search and /describe. */
export function parameterNames(inputSchema: Record<string, unknown>): string[] {
  return Object.keys(properties(inputSchema));
}

/** One line per argument: name, type, whether required, allowed values, defaults, nested fields. */
export function describeParameters(inputSchema: Record<string, unknown>): string[] {
  return describeSchema(inputSchema);
}
