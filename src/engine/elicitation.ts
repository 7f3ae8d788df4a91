import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/client";
import type { InboundEvent } from "../core/event.js";
import type { Reply, ReplyOption } from "../core/reply.js";
import { isCancel } from "./commands/cancel.js";
import { checkValue, fieldQuestion, formFields, typedValue, type FormField } from "./elicitation-form.js";
import { elicitTexts } from "./elicitation-texts.js";
import { newToken } from "./offers.js";
import type { TakenEvents } from "./taken.js";
import type { QueuedEvents } from "./turn-channel.js";
import type { TurnContext } from "./turn-context.js";
import type { AskedOf } from "../sessions/session.js";
import { aloneFor, nameOf } from "./access.js";
import { permissionTexts } from "./permission-texts.js";

type Control = "skip" | "submit" | "decline" | "cancel";
type Answer = { value: unknown } | { control: Control } | { timeout: true };

interface Asked {
  options: { token: string; label: string; value?: unknown; control?: Control }[];
  refs: string[];
}

/**
 * Asks a server's form elicitation in the room (DESIGN §6a): one field at a time,
 * enum fields and booleans as buttons, other fields answered by the next message,
 * each answer validated against the field's schema; Decline and Cancel always
 * offered; no answer within the namespace's timeout cancels. Answers are taken out
 * of band from the room's new events, since they queue behind this running turn.
 */
export async function elicit(
  turn: TurnContext,
  taken: TakenEvents,
  params: ElicitRequest["params"],
  signal: AbortSignal,
  owner: AskedOf,
): Promise<ElicitResult> {
  if (params.mode === "url" || !("requestedSchema" in params)) return { action: "decline" };
  const fields = formFields(params.requestedSchema as Record<string, unknown>);
  const ns = turn.namespace;
  const deadline = Date.now() + ns.elicitTimeoutMs;
  // The form is the owner's: in a group they alone see it, and the room that it waits.
  const note = aloneFor(turn.access, owner, permissionTexts.answeringFor(nameOf(owner)));
  await turn.channel.send({
    blocks: [
      {
        type: "text",
        text: elicitTexts.intro(
          ns.name,
          params.message,
          turn.access.binding?.group ? nameOf(owner) : undefined,
        ),
      },
    ],
    options: [],
    ...(note ? { personal: note } : {}),
  });
  const content: Record<string, unknown> = {};
  for (const [i, field] of fields.entries()) {
    const requiredDone = fields.every((f) => !f.required || f.name in content || f === field);
    let answer = await ask(
      turn,
      taken,
      field,
      fieldQuestion(field, i, fields.length),
      requiredDone,
      deadline,
      signal,
      owner,
    );
    while ("value" in answer) {
      const problem = checkValue(field.schema, answer.value);
      if (!problem) break;
      answer = await ask(
        turn,
        taken,
        field,
        elicitTexts.invalid(field.title, problem),
        requiredDone,
        deadline,
        signal,
        owner,
      );
    }
    if ("timeout" in answer) {
      await turn.channel.send({
        blocks: [{ type: "text", text: elicitTexts.timedOut }],
        options: [],
        ...theirs(turn, owner),
      });
      return { action: "cancel" };
    }
    if ("value" in answer) {
      content[field.name] = answer.value;
      continue;
    }
    if (answer.control === "decline") return { action: "decline" };
    if (answer.control === "cancel") return { action: "cancel" };
    if (answer.control === "submit") break;
  }
  return { action: "accept", content: content as NonNullable<ElicitResult["content"]> };
}

async function ask(
  turn: TurnContext,
  taken: TakenEvents,
  field: FormField,
  question: string,
  canSubmit: boolean,
  deadline: number,
  signal: AbortSignal,
  owner: AskedOf,
): Promise<Answer> {
  const values =
    field.kind === "boolean"
      ? [
          { label: elicitTexts.yes, value: true },
          { label: elicitTexts.no, value: false },
        ]
      : field.kind === "value"
        ? []
        : field.values.map((v) => ({ label: v.label, value: field.kind === "multi" ? [v.value] : v.value }));
  const controls: { label: string; control: Control }[] = [
    ...(field.required ? [] : [{ label: elicitTexts.skip, control: "skip" as const }]),
    ...(canSubmit && !field.required ? [{ label: elicitTexts.submit, control: "submit" as const }] : []),
    { label: elicitTexts.decline, control: "decline" },
    { label: elicitTexts.cancel, control: "cancel" },
  ];
  const asked: Asked = {
    options: [...values, ...controls].map((o) => ({ ...o, token: newToken() })),
    refs: [],
  };
  // Watched from before the question goes out: an answer can come the moment it is seen.
  const queued = await turn.channel.watch("now");
  try {
    const options: ReplyOption[] = asked.options.map(({ token, label }) => ({ token, label }));
    asked.refs = await turn.channel.send({
      blocks: [{ type: "text", text: question }],
      options,
      ...theirs(turn, owner),
    });
    return await wait(turn, taken, field, asked, queued, deadline, signal, owner);
  } finally {
    queued.close();
  }
}

async function wait(
  turn: TurnContext,
  taken: TakenEvents,
  field: FormField,
  asked: Asked,
  queued: QueuedEvents,
  deadline: number,
  signal: AbortSignal,
  owner: AskedOf,
): Promise<Answer> {
  for (let event = await queued.next(signal, deadline); event; event = await queued.next(signal, deadline)) {
    // Checked against the bindings as they are now, not the flag stored with the queued event.
    if (taken.has(event) || !turn.access.admits(event)) continue;
    if (event.sender.id !== owner.id) {
      // Another member's press on this question is not an answer: they are told whose it is.
      if (presses(asked, event)) {
        taken.take(event);
        await turn.channel.notify?.(event, permissionTexts.askedOf(nameOf(owner)));
      }
      continue;
    }
    const answer = answerOf(field, asked, event);
    if (answer === undefined) continue;
    taken.take(event);
    // Its own turn runs only once this call ends: the press is answered now.
    if (event.kind === "choice") await turn.channel.notify?.(event);
    return answer;
  }
  return signal.aborted ? { control: "cancel" } : { timeout: true };
}

/** A question's `personal` mark: the owner's alone in a group (no note: the room was told once). */
function theirs(turn: TurnContext, owner: AskedOf): Pick<Reply, "personal"> {
  const personal = aloneFor(turn.access, owner);
  return personal ? { personal } : {};
}

/** True for a press or keycap on one of this question's options. */
function presses(asked: Asked, event: InboundEvent): boolean {
  if (event.kind === "choice") return asked.options.some((o) => o.token === event.token);
  return event.kind === "reaction" && asked.refs.includes(event.messageRef);
}

function fromOption(option: Asked["options"][number] | undefined): Answer | undefined {
  if (!option) return undefined;
  return option.control ? { control: option.control } : { value: option.value };
}

/** What an event answers, or undefined when it is not an answer to this question. */
function answerOf(field: FormField, asked: Asked, event: InboundEvent): Answer | undefined {
  switch (event.kind) {
    case "choice":
      return fromOption(asked.options.find((o) => o.token === event.token));
    case "reaction":
      return asked.refs.includes(event.messageRef) ? fromOption(asked.options[event.number - 1]) : undefined;
    case "message": {
      const text = event.text.trim();
      if (isCancel(text)) return { control: "cancel" };
      const byLabel = asked.options.find((o) => o.control && o.label.toLowerCase() === text.toLowerCase());
      if (byLabel) return fromOption(byLabel);
      if (field.kind !== "value" && /^\d+$/.test(text) && Number(text) <= asked.options.length) {
        const byNumber = asked.options[Number(text) - 1];
        if (field.kind !== "multi" || byNumber?.control) return fromOption(byNumber);
      }
      // Any other message is meant as the answer: a value of the field's type, or a clear problem.
      const value = typedValue(field, text);
      return { value: value === undefined ? text : value };
    }
    default:
      return undefined;
  }
}
