/**
 * File reads the edge runs off the update's path (the intake never waits for a
 * download), one chain per chat or room, so that a chat's files keep their order.
 */
export class OrderedReads<K> {
  private readonly chains = new Map<K, Promise<void>>();

  /** Runs `task` after the key's earlier reads; its failure goes to `failed`, and the chain goes on. */
  later(key: K, task: () => Promise<void>, failed: (err: unknown) => void): void {
    const next = (this.chains.get(key) ?? Promise.resolve())
      .then(task)
      .catch(failed)
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    this.chains.set(key, next);
  }

  /** Waits for the reads in flight, so a stop does not lose one half-read. */
  async drain(): Promise<void> {
    await Promise.all(this.chains.values());
  }
}
