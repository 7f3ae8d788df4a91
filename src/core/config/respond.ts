import { z } from "zod";

/** Which messages of a group room reach the namespace: addressed ones (`mentions`, the default when unset) or all. */
export const RespondSchema = z.enum(["mentions", "all"]).optional();
