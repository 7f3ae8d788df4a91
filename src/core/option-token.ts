/**
 * The token of option number `n` of an offer: the offer id and the number. A paged
 * keyboard can then be rebuilt from its callback data alone; the offer id is random, and
 * a token is honoured only in the room whose session holds the offer.
 */
export function optionToken(offerId: string, n: number): string {
  return `${offerId}.${n}`;
}
