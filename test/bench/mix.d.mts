// Types of mix.mjs for the TypeScript suites.
import type { AdmissionReview } from '../../src/schemas/types.js';

export interface MixEntry {
  readonly name: string;
  readonly weight: number;
  readonly allowed: boolean;
  readonly review: AdmissionReview;
}
export declare function mixEntries(file?: string): MixEntry[];
export declare function requestMix(): string[];
export declare function classManifests(): string;
