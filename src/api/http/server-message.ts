import { sanitizeBody } from './sanitize.js';

const MESSAGE_FIELDS = ['message', 'error_description', 'error', 'detail', 'title'] as const;

/**
 * What the server said about a failure, in one short safe line: the message field of a JSON error body
 * when there is one, otherwise the body's text without markup.
 */
export function serverMessage(body: string, secrets: readonly string[]): string {
  const fromJson = jsonMessage(body);
  const text = fromJson ?? body.replace(/<[^>]*>/g, ' ');
  const line = sanitizeBody(text, secrets);
  return line === '' ? 'empty body' : line;
}

/** The message field of a JSON body, in one short safe line; undefined when the body has none. */
export function serverMessageField(body: string, secrets: readonly string[]): string | undefined {
  const message = jsonMessage(body);
  return message === undefined ? undefined : sanitizeBody(message, secrets);
}

function jsonMessage(body: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null) return undefined;
  const record = json as Record<string, unknown>;
  for (const field of MESSAGE_FIELDS) {
    const value = record[field];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}
