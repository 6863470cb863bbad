import type { IncomingMessage } from 'node:http';

const MAX_BODY_BYTES = 64 * 1024;

/** A request body the simulator cannot read. */
export class BodyError extends Error {}

/** The request's body, refused past MAX_BODY_BYTES. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyError(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** `text` as a JSON object; anything else is refused with a sentence saying what it was. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new BodyError(`request body is not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BodyError(`JSON request body must be an object, got ${JSON.stringify(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

function fromJson(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(parseJsonObject(text))) {
    if (typeof value === 'string' || typeof value === 'number') params[key] = String(value);
  }
  return params;
}

async function fromMultipart(body: Buffer, contentType: string): Promise<Record<string, string>> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new BodyError('multipart request body cannot be parsed');
  }
  const params: Record<string, string> = {};
  for (const [key, value] of form) if (typeof value === 'string') params[key] = value;
  return params;
}

/** The token request's parameters from a form, multipart or JSON body (form when unlabelled). */
export async function readParams(req: IncomingMessage): Promise<Record<string, string>> {
  const body = await readBody(req);
  const contentType = req.headers['content-type'] ?? '';
  if (/^application\/json\b/i.test(contentType)) return fromJson(body.toString('utf8'));
  if (/^multipart\/form-data\b/i.test(contentType)) return fromMultipart(body, contentType);
  return Object.fromEntries(new URLSearchParams(body.toString('utf8')));
}

/** client_id and client_secret from an HTTP Basic header, which OAuth clients may send instead. */
export function basicCredentials(authorization: string | undefined): Record<string, string> {
  const match = authorization === undefined ? null : /^Basic\s+(\S+)$/i.exec(authorization);
  if (!match) return {};
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return {};
  return {
    client_id: formDecode(decoded.slice(0, colon)),
    client_secret: formDecode(decoded.slice(colon + 1)),
  };
}

/** RFC 6749 form-encodes Basic credentials; a value that is not valid encoding is taken as written. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}
