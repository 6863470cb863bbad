import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { perConnection } from '../../src/store/per-connection.js';

describe('perConnection', () => {
  const opened: Database.Database[] = [];
  const open = () => {
    const db = new Database(':memory:');
    opened.push(db);
    return db;
  };
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
  });

  it('builds once per connection and hands every caller on it the same statements', () => {
    let builds = 0;
    const statements = perConnection((db) => {
      builds += 1;
      return { answer: db.prepare('SELECT 42').pluck() };
    });
    const first = open();
    const second = open();
    expect(statements(first)).toBe(statements(first));
    expect(statements(second)).not.toBe(statements(first));
    expect(builds).toBe(2);
    expect(statements(second).answer.get()).toBe(42);
  });
});
