import { askRelayed } from "../approval-relay.js";
import { on } from "../composer.js";

/** A call held in a group, relayed to this approver's direct chat (`approvals.where: dm`): asked here. */
export const approvalAsked = on("approval", (ctx, event) => askRelayed(ctx, event));
