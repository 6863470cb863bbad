import type { Redis } from 'ioredis';
import type { ShopQueues } from './queue.js';

/**
 * What the workers registered in Redis, so that `trigger`, `status` and the scheduler ticks find the
 * group that serves a shop: a sorted set of the groups (scored by when the group first registered, so
 * the newest side of a rolling deploy is preferred) and, per group, the set of its shops. Its workers
 * register it once they take jobs, and again with the schedules (Redis may have lost it). Whether a
 * group is served is not registered: it is whether a BullMQ worker is connected to its sync queue.
 */
const groupsKey = (prefix: string) => `${prefix}:groups`;
const shopsKey = (prefix: string, group: string) => `${prefix}:group:${group}:shops`;

/** Records (again) that `group` serves `shops`; idempotent, since a group's shops make its name. */
export async function registerGroup(
  redis: Redis,
  prefix: string,
  group: string,
  shops: readonly string[],
): Promise<void> {
  const multi = redis.multi().zadd(groupsKey(prefix), 'NX', Date.now(), group);
  if (shops.length > 0) multi.sadd(shopsKey(prefix, group), ...shops);
  await multi.exec();
}

/** Removes a group from the registry (its queues are empty and no worker of it is left). */
export async function forgetGroup(redis: Redis, prefix: string, group: string): Promise<void> {
  await redis.multi().zrem(groupsKey(prefix), group).del(shopsKey(prefix, group)).exec();
}

export interface GroupState {
  readonly group: string;
  readonly shops: ReadonlySet<string>;
  /** BullMQ workers connected to the group's sync queue now. */
  readonly workers: number;
}

/** Every registered group, the newest first, with its shops and connected workers. */
export async function readGroups(queues: ShopQueues): Promise<GroupState[]> {
  const { redis, prefix } = queues;
  const groups = await redis.zrevrange(groupsKey(prefix), 0, -1);
  return Promise.all(
    groups.map(async (group) => {
      const [shops, workers] = await Promise.all([
        redis.smembers(shopsKey(prefix, group)),
        queues.syncOf(group).getWorkersCount(),
      ]);
      return { group, shops: new Set(shops), workers };
    }),
  );
}

/** The group that takes `shop`'s jobs: the newest with a worker connected; undefined when none serves it. */
export function groupServing(groups: readonly GroupState[], shop: string): string | undefined {
  return groups.find((one) => one.workers > 0 && one.shops.has(shop))?.group;
}
