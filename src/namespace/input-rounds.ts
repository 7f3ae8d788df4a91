import {
  isInputRequiredResult,
  specTypeSchemas,
  withInputRequired,
  type CallToolResult,
  type Client,
  type ElicitRequest,
  type ElicitResult,
  type InputResponses,
  type RequestOptions,
} from "@modelcontextprotocol/client";
import { z } from "zod";
import { NamespaceError } from "../core/errors.js";
import { sleep } from "../core/retry.js";
import type { CallOptions } from "./call-options.js";

/** The most rounds of questions one call may ask before it is stopped (the SDK's own default). */
export const MAX_INPUT_ROUNDS = 10;
/** The pause before a round that asks nothing (only `requestState`), as the SDK paces one. */
const STATE_ONLY_ROUND_MS = 250;

/** One request a 2026 server embeds in `input_required` (or in an input_required task). */
export const InputRequestSchema = z.looseObject({
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type InputRequest = z.infer<typeof InputRequestSchema>;

/** An `input_required` result, parsed where it enters. */
const InputRequiredSchema = z.looseObject({
  inputRequests: z.record(z.string(), InputRequestSchema).optional(),
  requestState: z.string().optional(),
});

/** What a call's `tools/call` params are: the tool and its arguments. */
export interface ToolCallParams {
  name: string;
  arguments: Record<string, unknown>;
}

/** A server asked for something roomgate does not offer (it declares only form elicitation). */
export class UnsupportedInputError extends NamespaceError {
  constructor(namespace: string, tool: string, method: string) {
    super(namespace, `${tool} asked for ${method}, which roomgate does not offer`, {
      userText: `${namespace} asked for something this chat cannot give (${method}); ${tool} was not run.`,
    });
  }
}

/**
 * Answers a server's embedded requests one after the other (the room is asked one
 * question at a time): a form elicitation goes to the call's `onElicit`, as a pushed
 * `elicitation/create` would; without one it is declined. Anything else was never
 * offered and stops the call.
 */
export async function answerInputRequests(
  requests: Record<string, InputRequest>,
  options: CallOptions,
  signal: AbortSignal,
  fail: (method: string) => Error,
): Promise<InputResponses> {
  const responses: Record<string, ElicitResult> = {};
  for (const [key, request] of Object.entries(requests)) {
    if (request.method !== "elicitation/create") throw fail(request.method);
    const parsed = specTypeSchemas.ElicitRequestParams["~standard"].validate(request.params);
    // A question that is not a valid elicitation cannot be asked: it is declined, as one nobody can answer.
    if (!("value" in parsed) || !options.onElicit) {
      responses[key] = { action: "decline" };
      continue;
    }
    responses[key] = await options.onElicit(parsed.value as ElicitRequest["params"], signal);
  }
  return responses as InputResponses;
}

/**
 * Calls a tool on a 2026-07-28 connection, where a server asks back by answering
 * `input_required`: the questions are asked in the room through the call's own
 * `onElicit` (so they reach the person whose call it is, even with other calls in
 * flight on the connection), and the call is sent again with the answers and the
 * server's `requestState`, until it completes. Progress of every round goes to the
 * same `onProgress`.
 */
export async function callWithInputRounds(
  client: Client,
  namespace: string,
  call: ToolCallParams,
  options: CallOptions,
  limits: Pick<RequestOptions, "timeout" | "resetTimeoutOnProgress">,
): Promise<CallToolResult> {
  const signal = options.signal ?? new AbortController().signal;
  let retry: { inputResponses?: InputResponses; requestState?: string } = {};
  for (let round = 1; ; round++) {
    const reply = await client.request(
      { method: "tools/call", params: { ...call, ...retry } },
      withInputRequired(specTypeSchemas.CallToolResult),
      {
        ...limits,
        allowInputRequired: true,
        signal: options.signal,
        onprogress: (p) => options.onProgress?.({ progress: p.progress, total: p.total, message: p.message }),
      },
    );
    if (!isInputRequiredResult(reply)) return reply;
    if (round === MAX_INPUT_ROUNDS) {
      throw new NamespaceError(namespace, `${call.name} still asked for input after ${round} rounds`, {
        userText: `${namespace} kept asking questions (${round} rounds) and ${call.name} was stopped.`,
      });
    }
    const asked = InputRequiredSchema.parse(reply);
    if (Object.keys(asked.inputRequests ?? {}).length === 0) await sleep(STATE_ONLY_ROUND_MS, options.signal);
    const inputResponses = await answerInputRequests(
      asked.inputRequests ?? {},
      options,
      signal,
      (method) => new UnsupportedInputError(namespace, call.name, method),
    );
    retry = {
      ...(Object.keys(inputResponses).length > 0 ? { inputResponses } : {}),
      ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
    };
  }
}
