// Types of mix.mjs for the TypeScript suites.
import type { AdmissionReview } from '../../src/schemas/types.js';

/** `every-write`: every snapshot write reaches the webhook (1.20 capture); `matched`: 1.30+'s matchConditions (1.36). */
export type MixName = 'every-write' | 'matched';
export declare const MIXES: Record<MixName, { readonly capture: string }>;

export interface MixEntry {
  readonly name: string;
  readonly weight: number;
  readonly allowed: boolean;
  readonly review: AdmissionReview;
}
export declare function mixEntries(mix?: MixName, file?: string): MixEntry[];
export declare function entriesLeftOut(): { name: string; changed: boolean; isReview: (review: unknown) => boolean }[];
export declare function requestMix(mix?: MixName): string[];
export declare function classManifests(): string;
