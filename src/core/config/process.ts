import { z } from "zod";

/** The `worker` section: how many rooms one process runs at once. */
export const WorkerSchema = z
  .strictObject({ concurrency: z.number().int().positive().default(8) })
  .prefault({});

/** The `shutdown` section: how long running turns get to finish on SIGTERM. */
export const ShutdownSchema = z
  .strictObject({ graceSeconds: z.number().nonnegative().default(10) })
  .prefault({});

/** A TCP port; 0 lets the system choose a free one. */
export const PortSchema = z
  .number()
  .int("a port is a whole number")
  .min(0, "a port is a number from 0 to 65535")
  .max(65535, "a port is a number from 0 to 65535");

/** What the HTTP listener holds a client to where `http` does not say (optional keys, so configs built in code stay valid). */
export const HTTP_LIMIT_DEFAULTS = {
  headersTimeoutSeconds: 10,
  requestTimeoutSeconds: 30,
  maxConnections: 256,
};

/** The `http` section: where health and metrics are served (off unless set). */
export const HttpSchema = z
  .strictObject({
    port: PortSchema.default(9464),
    host: z.string().default("127.0.0.1"),
    /** Longest a client may take to send a request's headers, in seconds; then 408 and the connection is closed. */
    headersTimeoutSeconds: z.number().positive().optional(),
    /** Longest a client may take to send a whole request (headers and body), in seconds. */
    requestTimeoutSeconds: z.number().positive().optional(),
    /** Most connections open at once; more are closed as they come. */
    maxConnections: z.number().int().positive().optional(),
  })
  .refine(
    (http) =>
      (http.headersTimeoutSeconds ?? HTTP_LIMIT_DEFAULTS.headersTimeoutSeconds) <=
      (http.requestTimeoutSeconds ?? HTTP_LIMIT_DEFAULTS.requestTimeoutSeconds),
    {
      message: "`headersTimeoutSeconds` is part of the request: at most `requestTimeoutSeconds`",
      path: ["headersTimeoutSeconds"],
    },
  );
