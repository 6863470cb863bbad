import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { perConnection, statementsPerConnection } from '../../src/store/per-connection.js';

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

  it('prepares each statement of a set the first time it is used on a connection, and only then', () => {
    const prepared: string[] = [];
    const statements = statementsPerConnection({
      answer: (db) => {
        prepared.push('answer');
        return db.prepare('SELECT 42').pluck();
      },
      // A statement over a table that does not exist fails to prepare: unused, it never is.
      missing: (db) => {
        prepared.push('missing');
        return db.prepare('SELECT * FROM no_such_table');
      },
    });
    const first = open();
    const second = open();
    expect(statements(first).answer.get()).toBe(42);
    expect(statements(first).answer).toBe(statements(first).answer);
    expect(prepared).toEqual(['answer']);
    expect(statements(second).answer).not.toBe(statements(first).answer);
    expect(prepared).toEqual(['answer', 'answer']);
    expect(() => statements(second).missing).toThrow(/no such table: no_such_table/);
  });
});
