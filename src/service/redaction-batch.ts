/**
 * How a use case sends every text of one call through the redactor at once: each text is added and
 * read back after `run()`, so the rules pass over the call's texts in one go and each field gets
 * its own redacted text back in place.
 *
 * @example
 * const batch = new TextBatch();
 * const name = batch.add(entity.name);
 * await batch.run(redactor, tally);
 * name(); // the redacted name
 */
import { RedactionTally, type Redactor } from '../core/text/redaction.js';

export class TextBatch {
  private readonly texts: string[] = [];
  private redacted: readonly string[] | undefined;

  /** Adds a text; the getter gives its redacted form once `run()` resolved. */
  add(text: string): () => string {
    const i = this.texts.push(text) - 1;
    return () => {
      if (this.redacted === undefined) throw new Error('TextBatch read before run()');
      return this.redacted[i] ?? text;
    };
  }

  /** As add, passing undefined through. */
  addOptional(text: string | undefined): () => string | undefined {
    if (text === undefined) return () => undefined;
    return this.add(text);
  }

  /** Redacts every text added; what was found is added to `tally` when given. */
  async run(redactor: Redactor, tally?: RedactionTally): Promise<void> {
    if (!redactor.enabled || this.texts.length === 0) {
      this.redacted = this.texts;
      return;
    }
    const result = await redactor.redactAll(this.texts);
    this.redacted = result.texts;
    tally?.add(result.counts);
  }
}

export { RedactionTally };
