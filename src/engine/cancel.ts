/** True for the message that cancels a running call or question: `/cancel` (a bot mention allowed). */
export function isCancel(text: string): boolean {
  return /^\/cancel(?:@\S+)?$/i.test(text.trim());
}
