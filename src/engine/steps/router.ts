import type { Step } from "../composer.js";
import { suggestTools } from "../no-router.js";
import { runTool } from "../tool-runner.js";

/** Everything else is a question for the namespace's router; without one, matching tools are offered. */
export const router: Step = async (ctx) => {
  const { text } = ctx.message!;
  const ask = ctx.namespace.askTool;
  if (ask === null || !(await ctx.namespace.has(ask))) return suggestTools(ctx, text);
  return runTool(ctx, ask, { question: text });
};
