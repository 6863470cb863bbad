import type { Decimal } from '../domain/decimal.js';
import { Utf8Arena } from './arena.js';
import { bitsToList, formatUnits, renderPrice, type SimRecord } from './record.js';
import { CATEGORY_COUNT, COUNTRIES, DESCRIPTIONS, RAW_DESCRIPTIONS } from './texts.js';
import type { SimItem } from './types.js';

/** What every item's JSON shares: the server's address and the shop summary. */
export interface RenderContext {
  readonly itemUrlPrefix: string;
  readonly shopId: string;
  readonly shopName: string;
  readonly shopUrl: string;
  readonly shopItemsUrl: string;
  /** The shop summary rendered once; its `image` is the spec's empty object. */
  readonly shopJson: string;
  readonly arena: Utf8Arena;
}

export function renderContext(baseUrl: string, shopId: string): RenderContext {
  const shopUrl = `${baseUrl}/v1/shops/${encodeURIComponent(shopId)}`;
  const shopName = `Demo Shop "${shopId}", Ünïcødé & Co`;
  const shopItemsUrl = `${shopUrl}/items`;
  const shopJson = JSON.stringify({
    id: shopId,
    url: shopUrl,
    name: shopName,
    image: {},
    items_url: shopItemsUrl,
  });
  return {
    itemUrlPrefix: `${baseUrl}/v1/items/`,
    shopId,
    shopName,
    shopUrl,
    shopItemsUrl,
    shopJson,
    arena: new Utf8Arena(),
  };
}

const DESCRIPTION_JSON = DESCRIPTIONS.map((text) => JSON.stringify(text));
const RAW_DESCRIPTION_JSON = RAW_DESCRIPTIONS.map((text) => JSON.stringify(text));
const WEB_URL_PREFIX = 'https://www.demo-market.test/items/';
const FBCOMMENTS_PREFIX = 'https://social.demo-market.test/comments?item=';
const PHOTO_PREFIX = 'https://img.demo-market.test/photos/';

function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

function photoIds(record: SimRecord): number[] {
  return Array.from({ length: record.photoCount }, (_, k) => record.photoBase + k);
}

function photoUrls(record: SimRecord): string[] {
  return photoIds(record).map((id) => `${PHOTO_PREFIX}${id}.jpg`);
}

/** JSON of the photo URLs, built by hand: this runs once per item and shows in profiles. */
function photosJson(record: SimRecord): string {
  let json = '[';
  for (let k = 0; k < record.photoCount; k += 1) {
    json += `${k > 0 ? ',' : ''}"${PHOTO_PREFIX}${record.photoBase + k}.jpg"`;
  }
  return `${json}]`;
}

/** JSON arrays for every bit mask, rendered once. */
function masksJson<T>(width: number, value: (bit: number) => T): readonly string[] {
  return Array.from({ length: 1 << width }, (_, mask) => JSON.stringify(bitsToList(mask, value, width)));
}

const CATEGORIES_JSON = masksJson(CATEGORY_COUNT, (bit) => bit + 1);
const SHIPPING_JSON = masksJson(COUNTRIES.length, (bit) => COUNTRIES[bit]);

/** The item's JSON as the API sends it; ids and URLs are built from JSON-safe characters. */
function renderRecord(record: SimRecord, ctx: RenderContext): string {
  const { id } = record;
  let json = `{"id":"${id}","title":${JSON.stringify(record.title)}`;
  if (record.currency !== null) json += `,"currency":"${record.currency}"`;
  if (record.description >= 0) json += `,"description":${DESCRIPTION_JSON[record.description]}`;
  if (record.rawDescription >= 0) json += `,"raw_description":${RAW_DESCRIPTION_JSON[record.rawDescription]}`;
  if (!record.published) json += ',"published":false';
  json += `,"url":"${ctx.itemUrlPrefix}${id}","created_at":"${isoSeconds(record.createdMs)}"`;
  json += `,"price":${renderPrice(record.priceUnits, record.scale, record.priceRepr)},"original_price":`;
  json +=
    record.originalUnits === null
      ? 'null'
      : renderPrice(record.originalUnits, record.scale, record.originalRepr);
  json += `,"photos":${photosJson(record)}`;
  if (record.hasPhotosId) json += `,"photos_id":[${photoIds(record).join(',')}]`;
  if (record.hasFbcomments) json += `,"fbcomments":"${FBCOMMENTS_PREFIX}${id}"`;
  json += `,"shop":${ctx.shopJson},"quantity":${record.quantity}`;
  if (record.hasWebUrl) json += `,"web_url":"${WEB_URL_PREFIX}${id}"`;
  json += `,"category_ids":${CATEGORIES_JSON[record.categories]}`;
  json += `,"featured":${record.featured},"promotable":${record.promotable}`;
  json += `,"shipping_to":${SHIPPING_JSON[record.shipping]}`;
  return `${json},"views":${record.views}}`;
}

/** The record's JSON as UTF-8, rendered on first use and again after a change; pages are concatenated bytes. */
export function recordJson(record: SimRecord, ctx: RenderContext): Buffer {
  if (record.json === undefined) {
    const json = renderRecord(record, ctx);
    record.json = record.poison ? poisoned(json, record.poison) : ctx.arena.store(json);
  }
  return record.json;
}

/** The item's JSON `json` with each poisoned member's value replaced by (or added as) its bytes. */
function poisoned(json: string, poison: ReadonlyMap<string, Buffer>): Buffer {
  const members = Object.entries(JSON.parse(json) as Record<string, unknown>);
  const parts: Buffer[] = [];
  const write = (name: string, value: Buffer) =>
    parts.push(Buffer.from(`${parts.length === 0 ? '{' : ','}${JSON.stringify(name)}:`), value);
  for (const [name, value] of members) write(name, poison.get(name) ?? Buffer.from(JSON.stringify(value)));
  for (const [name, value] of poison) if (!members.some(([member]) => member === name)) write(name, value);
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
}

export function canonicalPrice(units: number, scale: number): Decimal {
  return formatUnits(units, scale, false) as Decimal;
}

/** The record as a correct client must normalise it. */
export function toSimItem(record: SimRecord, ctx: RenderContext): SimItem {
  return {
    id: record.id,
    title: record.title,
    price: canonicalPrice(record.priceUnits, record.scale),
    original_price: record.originalUnits === null ? null : canonicalPrice(record.originalUnits, record.scale),
    currency: record.currency,
    quantity: record.quantity,
    published: record.published,
    created_at: isoSeconds(record.createdMs),
    url: `${ctx.itemUrlPrefix}${record.id}`,
    web_url: record.hasWebUrl ? `${WEB_URL_PREFIX}${record.id}` : null,
    photos: photoUrls(record),
    photos_id: record.hasPhotosId ? photoIds(record) : [],
    description: DESCRIPTIONS[record.description] ?? null,
    raw_description: RAW_DESCRIPTIONS[record.rawDescription] ?? null,
    fbcomments: record.hasFbcomments ? `${FBCOMMENTS_PREFIX}${record.id}` : null,
    shop_id: ctx.shopId,
    shop_name: ctx.shopName,
    shop_url: ctx.shopUrl,
    shop_image: null,
    shop_items_url: ctx.shopItemsUrl,
  };
}
