import { z } from 'zod';

/**
 * Where a reading stopped, as a run keeps it to be resumed: the offset of the last proved item, the
 * page size it read with, and the last proved ids (a resumed reading must find one of them again).
 */
export interface ListingCheckpoint {
  readonly end: number;
  readonly maxPerPage: number;
  readonly tail: readonly string[];
}

/** The largest `per_page` a reading asks for: a resumed one keeps the size its run had come down to. */
export function readingPerPage(perPage: number, resume: ListingCheckpoint | undefined): number {
  return Math.min(perPage, resume?.maxPerPage ?? perPage);
}

const checkpointSchema = z.object({
  end: z.number().int().min(-1),
  maxPerPage: z.number().int().positive(),
  tail: z.array(z.string()),
});

/** The checkpoint a run stored, or undefined when there is none or it is not one (read from page 1). */
export function parseCheckpoint(text: string | null | undefined): ListingCheckpoint | undefined {
  if (!text) return undefined;
  try {
    const parsed = checkpointSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}
