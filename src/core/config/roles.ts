import { z } from "zod";

/**
 * Who approves a binding's destructive calls and how: `by` the requester (the default
 * without `approvers`) or the binding's approvers (the default with them), `count`
 * distinct people (2 = a second person must approve), for the tools matching `tools`
 * (default: every tool MCP marks destructive or the namespace confirms; a listed tool
 * needs approval even when MCP does not mark it), asked in the room or, in a group, in
 * the approvers' direct chats with the bot (`where: dm`).
 */
export const ApprovalsSchema = z
  .strictObject({
    by: z.enum(["requester", "approvers"]).optional(),
    count: z.number().int().min(1).max(10).default(1),
    tools: z.array(z.string().min(1)).optional(),
    where: z.enum(["room", "dm"]).default("room"),
  })
  .refine((a) => a.count === 1 || a.by !== "requester", {
    message: "only one person can approve `by: requester`; use `by: approvers` for count > 1",
    path: ["count"],
  });
export type ApprovalsConfig = z.infer<typeof ApprovalsSchema>;

/** What the audit trail keeps of a binding's calls (DESIGN §9). */
export const BindingAuditSchema = z.strictObject({
  /** Keep the arguments of approved and destructive calls in the trail (their hash is always kept). */
  arguments: z.boolean().default(true),
});

/**
 * The role keys every binding takes, beside its `users` (who may ask), for user ids of
 * the platform's kind: a `name` for `roomgate pair` / `users` / the audit trail,
 * `callers` (may use /call and /tools; default: the users), `approvers` (may approve
 * destructive calls; default: the person who asked), `approvals` and `audit`.
 */
export function roleFields<T extends z.ZodType>(userId: T) {
  return {
    /** The binding's name in `roomgate pair --binding`, `roomgate users` and the audit trail. */
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.:@!+-]{1,100}$/, "letters, digits and _ . : @ ! + - (at most 100)")
      .optional(),
    callers: z.array(userId).optional(),
    approvers: z.array(userId).optional(),
    approvals: ApprovalsSchema.optional(),
    audit: BindingAuditSchema.optional(),
  };
}
