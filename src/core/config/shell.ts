import { z } from "zod";
import { roleFields } from "./roles.js";

/** A terminal user as `roomgate shell --user` names them (default: the login name). */
const ShellUserSchema = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, "a user name like alice");

/**
 * One terminal room's binding (`roomgate shell --room NAME`): who may use it and their
 * roles. A terminal room without one is the operator's own: whoever runs the shell may
 * do everything, and approves their own calls.
 */
const ShellRoomSchema = z.strictObject({
  room: z.string().min(1),
  /** Who may use the room (`--user`); default: anyone at the terminal. */
  users: z.array(ShellUserSchema).optional(),
  ...roleFields(ShellUserSchema),
});

/** The `shell` section: bindings of terminal rooms, for roles, pairing and the audit trail. */
export const ShellSchema = z
  .strictObject({
    rooms: z.array(ShellRoomSchema).default([]),
  })
  .prefault({});
export type ShellConfig = z.infer<typeof ShellSchema>;
