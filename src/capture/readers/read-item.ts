/** What a reader gives for each conversation it meets: the conversation, or why it was left out. */
import type { Conversation } from '../conversation.js';

export type ReadItem =
  | { readonly kind: 'conversation'; readonly conversation: Conversation }
  | {
      readonly kind: 'skipped';
      /** Why, in a few words that group well in a summary ("no visible turns"). */
      readonly reason: string;
      /** Which conversation or file, where the source says. */
      readonly where?: string | undefined;
    };

export const conversationItem = (conversation: Conversation): ReadItem => ({ kind: 'conversation', conversation });

export const skippedItem = (reason: string, where?: string): ReadItem => ({ kind: 'skipped', reason, where });

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A non-empty string, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Epoch ms from an ISO date string, else undefined. */
export function isoTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Epoch ms from seconds (ChatGPT's float `create_time`), else undefined. */
export function secondsTime(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value * 1000) : undefined;
}
