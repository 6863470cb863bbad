import { describe, expect, it } from 'vitest';
import { linkedSignal } from '../../../src/api/http/linked-signal.js';

describe('a linked signal', () => {
  it('is aborted by the first of its sources to abort, with its reason', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkedSignal([a.signal, undefined, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    b.abort(new Error('stop b'));
    expect(linked.signal.reason).toEqual(new Error('stop b'));
    a.abort(new Error('stop a'));
    expect(linked.signal.reason).toEqual(new Error('stop b'));
  });

  it('is aborted from the start by a source already aborted', () => {
    const a = new AbortController();
    a.abort('before');
    expect(linkedSignal([new AbortController().signal, a.signal]).signal.reason).toBe('before');
  });

  it('follows its sources no more once unlinked, and can be aborted itself', () => {
    const a = new AbortController();
    const linked = linkedSignal([a.signal]);
    linked.unlink();
    a.abort('late');
    expect(linked.signal.aborted).toBe(false);
    linked.abort('deadline');
    expect(linked.signal.reason).toBe('deadline');
  });

  it('with no source is aborted only by itself', () => {
    const linked = linkedSignal([undefined]);
    expect(linked.signal.aborted).toBe(false);
    linked.abort('deadline');
    expect(linked.signal.aborted).toBe(true);
  });
});
