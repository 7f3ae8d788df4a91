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

/** The `http` section: where health and metrics are served (off unless set). */
export const HttpSchema = z.strictObject({
  port: PortSchema.default(9464),
  host: z.string().default("127.0.0.1"),
});
