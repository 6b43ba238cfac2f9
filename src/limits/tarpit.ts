/**
 * A refused password guess is answered after a pause (docs/api-decisions.md, "Nothing the phone
 * reports is lost, and nobody takes the dashboard: hardening round three"): a guesser sending
 * back to back over one connection then makes one try a second instead of thousands, and the
 * server spends its CPU on everyone else. A pause costs no CPU, only the waiting connection; at
 * most `maxHeld` are held at once, past that the refusal goes at once.
 */
export class Tarpit {
  private held = 0;

  constructor(private readonly delayMs: number, private readonly maxHeld: number) {}

  /** Resolves after the pause, or at once when `maxHeld` refusals are already waiting. */
  async hold(): Promise<void> {
    if (this.held >= this.maxHeld || this.delayMs <= 0) return;
    this.held++;
    try {
      await Bun.sleep(this.delayMs);
    } finally {
      this.held--;
    }
  }
}

/** How long a refused password guess waits for its 429, and how many may wait at once. */
export const REFUSED_GUESS_DELAY_MS = 1_000;
export const REFUSED_GUESSES_HELD_MAX = 256;
