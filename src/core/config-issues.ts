import type { z } from "zod";
import { closest } from "./did-you-mean.js";

/** One problem found in a configuration: where (a full path with indexes) and what. */
export interface ConfigIssue {
  /** The path as written in messages: `telegram.bots[1].namespace`. */
  path: string;
  message: string;
  /** The same path as keys and indexes, to find the line in the file. */
  keys?: readonly PropertyKey[];
  /** The line of the file the path points at (or its nearest written parent), when known. */
  line?: number;
  /** For an unknown key: the known key it was probably meant to be. */
  meant?: string;
  /** The key is not one the schema knows. */
  unknownKey?: boolean;
}

/** Renders a path of keys and indexes as a person reads it: `telegram.bots[1].namespace`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z0-9_-]+$/.test(key)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === "" ? "(root)" : out;
}

/** One issue as a line: `path: message`. */
export function issueLine(issue: ConfigIssue): string {
  return `${issue.path}: ${issue.message}${issue.line === undefined ? "" : `  [line ${issue.line}]`}`;
}

/** An issue for a path of keys and indexes. */
export function issueAt(keys: readonly PropertyKey[], message: string): ConfigIssue {
  return { path: formatPath(keys), message, keys };
}

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
}

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

/** The schema a pipe's shape comes from: its input, or its output after a preprocess step. */
function pipeShape(def: SchemaDef): z.ZodType | undefined {
  if (def.type !== "pipe") return undefined;
  return def.in && defOf(def.in).type === "transform" ? def.out : def.in;
}

/** Strips wrappers (optional, default, pipe…) down to the schema that gives the shape. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 20; i++) {
    const def = defOf(current);
    const inner = def.innerType ?? pipeShape(def);
    if (!inner) return current;
    current = inner;
  }
  return current;
}

/** The keys an object schema at `path` accepts, found by walking the schema itself. */
export function knownKeysAt(root: z.ZodType, path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType | undefined = unwrap(root);
  for (const key of path) {
    if (!schema) return [];
    const def = defOf(schema);
    if (def.type === "object") schema = def.shape?.[String(key)];
    else if (def.type === "array") schema = def.element;
    else if (def.type === "record") schema = def.valueType;
    else return [];
    schema = schema ? unwrap(schema) : undefined;
  }
  if (!schema) return [];
  const def = defOf(schema);
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}

/**
 * Turns zod's issues into configuration issues: one per unknown key, each with a
 * "did you mean" from the keys the schema knows at that place.
 */
export function fromZodIssues(root: z.ZodType, issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const known = knownKeysAt(root, issue.path);
      for (const key of issue.keys) {
        const guess = closest(key, known);
        const hint = guess ? `did you mean "${guess}"?` : `known keys: ${known.join(", ")}`;
        out.push({
          ...issueAt([...issue.path, key], `unknown key (${hint})`),
          unknownKey: true,
          ...(guess ? { meant: guess } : {}),
        });
      }
      continue;
    }
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      // The first branch's issues are the most telling; the rest repeat them for other shapes.
      out.push(
        ...fromZodIssues(
          root,
          issue.errors[0]!.map((e) => ({ ...e, path: [...issue.path, ...e.path] })),
        ),
      );
      continue;
    }
    out.push(issueAt(issue.path, issue.message));
  }
  return out;
}
