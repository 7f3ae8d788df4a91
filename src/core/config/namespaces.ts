import { z } from "zod";
import { fromMilliseconds, RENAMED_TO_SECONDS } from "./renamed-keys.js";

/** Which tools of a namespace a binding shows (`allow`/`deny` globs) and runs without asking (`trust`). */
export const NamespaceToolsSchema = z
  .strictObject({
    /** Only tools matching one of these patterns exist for the room; default: all. */
    allow: z.array(z.string().min(1)).optional(),
    /** Tools matching one of these patterns do not exist for the room. */
    deny: z.array(z.string().min(1)).default([]),
    /** Destructive tools matching one of these patterns run without an approval. */
    trust: z.array(z.string().min(1)).default([]),
    /** Tools matching one of these patterns ask for an approval even when MCP does not mark them destructive. */
    confirm: z.array(z.string().min(1)).default([]),
  })
  .prefault({});

/** Names of a namespace's own discovery tools (DESIGN: discovery by address). */
export const DiscoverySchema = z.strictObject({
  search: z.string().min(1),
  describe: z.string().min(1).optional(),
  call: z.string().min(1),
});

/** One namespace: a stdio command or a Streamable HTTP url (DESIGN §10). */
export const NamespaceConfigSchema = z.preprocess(
  fromMilliseconds(RENAMED_TO_SECONDS.namespace),
  z
    .strictObject({
      command: z.array(z.string()).min(1).optional(),
      cwd: z.string().optional(),
      env: z.record(z.string(), z.string()).default({}),
      url: z.url().optional(),
      headers: z.record(z.string(), z.string()).default({}),
      /** Tool-name prefix of the namespace; default `<name>.`, `""` means the whole server. */
      prefix: z.string().optional(),
      /** The router's tool name; default `<prefix>ask`; `false` = the namespace has no router. */
      ask: z.union([z.string().min(1), z.literal(false)]).optional(),
      tools: NamespaceToolsSchema,
      /** The namespace's own discovery tools (search / describe / call by address), when it has them. */
      discovery: DiscoverySchema.optional(),
      /** A call's whole time, in seconds; with `maxCallSeconds`, the longest it may go without progress. */
      timeoutSeconds: z.number().positive().default(30),
      /**
       * The longest a call may run while it keeps sending progress, in seconds (at least
       * `timeoutSeconds`); unset, progress does not extend a call past `timeoutSeconds`.
       */
      maxCallSeconds: z.number().positive().optional(),
      /** How long a question the server asks in the room (elicitation) waits for an answer, in seconds. */
      elicitTimeoutSeconds: z.number().positive().default(300),
      /** How long the server may take to start and answer `initialize`, in seconds. */
      startTimeoutSeconds: z.number().positive().default(30),
    })
    .refine((ns) => (ns.command === undefined) !== (ns.url === undefined), {
      message: "a namespace needs exactly one of `command` (stdio) or `url` (Streamable HTTP)",
    })
    .refine((ns) => ns.maxCallSeconds === undefined || ns.maxCallSeconds >= ns.timeoutSeconds, {
      message: "`maxCallSeconds` is the longest a call may run with progress: at least `timeoutSeconds`",
      path: ["maxCallSeconds"],
    }),
);
export type NamespaceConfig = z.infer<typeof NamespaceConfigSchema>;

/** The `namespaces` section: each namespace by its name. */
export const NamespacesSchema = z
  .record(z.string().regex(/^[A-Za-z0-9_-]+$/), NamespaceConfigSchema)
  .default({});
