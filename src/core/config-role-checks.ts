import { formatPath, issueAt, type ConfigIssue } from "./config-issues.js";
import { botIdPart } from "./telegram-token.js";

type Tree = Record<string, unknown>;

function tree(value: unknown): Tree | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Tree) : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** One binding as the YAML has it: where it is, the name it goes by, whether it is a room of several people. */
interface RawBinding {
  path: PropertyKey[];
  name: string;
  group: boolean;
  raw: Tree;
}

function bindingsOf(root: Tree): RawBinding[] {
  const out: RawBinding[] = [];
  list(tree(root.telegram)?.bots).forEach((bot, i) => {
    const b = tree(bot);
    if (!b) return;
    const id = typeof b.token === "string" ? botIdPart(b.token) : undefined;
    const named = (raw: Tree, fallback: string) => (typeof raw.name === "string" ? raw.name : fallback);
    out.push({ path: ["telegram", "bots", i], name: named(b, `telegram:${id}`), group: false, raw: b });
    list(b.groups).forEach((group, j) => {
      const g = tree(group);
      if (!g) return;
      const name = named(g, `telegram:${id}:${String(g.chat)}`);
      out.push({ path: ["telegram", "bots", i, "groups", j], name, group: true, raw: g });
    });
  });
  list(tree(root.matrix)?.rooms).forEach((room, i) => {
    const r = tree(room);
    if (!r) return;
    const name = typeof r.name === "string" ? r.name : `matrix:${String(r.room)}`;
    out.push({ path: ["matrix", "rooms", i], name, group: true, raw: r });
  });
  list(tree(root.shell)?.rooms).forEach((room, i) => {
    const r = tree(room);
    if (!r) return;
    const name = typeof r.name === "string" ? r.name : `shell:${String(r.room)}`;
    out.push({ path: ["shell", "rooms", i], name, group: false, raw: r });
  });
  return out;
}

/**
 * The role keys across a binding and the whole file: names are unique (pairing and the
 * audit trail go by them), approval by approvers needs enough approvers to ever be
 * granted, and `where: dm` means something only in a room of several people.
 */
export function checkRoles(root: Tree, errors: ConfigIssue[], warnings: ConfigIssue[]): void {
  const all = bindingsOf(root);
  for (const b of all) {
    // Default names repeat only when a place is bound twice, which is reported as such.
    const other = typeof b.raw.name === "string" ? all.find((o) => o !== b && o.name === b.name) : undefined;
    if (other) {
      errors.push(
        issueAt(
          [...b.path, "name"],
          `binding name "${b.name}" is used twice (also at ${formatPath(other.path)})`,
        ),
      );
    }
    const approvals = tree(b.raw.approvals);
    selfApprovalWarning(b, approvals ?? {}, warnings);
    if (!approvals) continue;
    const approvers = list(b.raw.approvers).length;
    const byApprovers =
      approvals.by === "approvers" || (approvals.by === undefined && b.raw.approvers !== undefined);
    const count = typeof approvals.count === "number" ? approvals.count : 1;
    if (byApprovers && count > approvers) {
      errors.push(
        issueAt(
          [...b.path, "approvals", "count"],
          approvers === 0
            ? "approval by approvers needs `approvers` listed in this binding"
            : `${count} approvals are needed but only ${approvers} approvers are listed, so nothing could ever be approved`,
        ),
      );
    }
    if (approvals.where === "dm" && !b.group) {
      warnings.push(
        issueAt([...b.path, "approvals", "where"], "ignored: this binding is a direct chat already"),
      );
    }
    if (approvals.where === "dm" && b.path[0] === "matrix") {
      warnings.push(
        issueAt(
          [...b.path, "approvals", "where"],
          "Matrix has no direct chats with the bot here: approvals are asked in the room",
        ),
      );
    }
  }
}

/**
 * A requester never counts toward their own call's approvals: an approver who may also
 * ask (is one of the users) leaves `approvers - 1` people to approve their calls, and
 * with fewer than `count` of them nobody can (`count: 1` and a single approver who asks).
 */
function selfApprovalWarning(b: RawBinding, approvals: Tree, warnings: ConfigIssue[]): void {
  if (approvals.by === "requester") return;
  const count = typeof approvals.count === "number" ? approvals.count : 1;
  const approvers = list(b.raw.approvers).map(String);
  const users = new Set(list(b.raw.users).map(String));
  const asking = approvers.filter((a) => users.has(a));
  // More approvers needed than listed at all is an error already, reported as such.
  if (asking.length === 0 || approvers.length - 1 >= count || count > approvers.length) return;
  const who = asking.join(", ");
  warnings.push(
    issueAt(
      [...b.path, b.raw.approvals === undefined ? "approvers" : "approvals"],
      `nobody can approve a call ${who} asks for: a requester does not count toward their own approvals, ` +
        `and ${approvers.length - 1} other approver(s) are fewer than count: ${count}; list another approver`,
    ),
  );
}
