import { describe, expect, it } from 'vitest';
import { hashingSlots, type HashingWork } from '../../src/framework/base/hashing-slots.js';

/** Tasks that start when the slots let them and end when the test says. */
function harness(total: number) {
  const slots = hashingSlots(total);
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const submit = (work: HashingWork, name: string): Promise<string> =>
    slots.run(work, () => {
      started.push(name);
      return new Promise<string>((resolve) => finishers.set(name, () => resolve(name)));
    });
  const finish = async (name: string): Promise<void> => {
    finishers.get(name)!();
    // Let the released slot's waiter start.
    for (let i = 0; i < 5; i += 1) await Promise.resolve();
  };
  return { started, submit, finish };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
};

describe('hashing slots', () => {
  it('never lets writes occupy every slot: a check starts at once under a flood of writes', async () => {
    const { started, submit } = harness(2);
    for (let i = 0; i < 150; i += 1) void submit('write', `write ${i}`);
    await settle();
    expect(started).toEqual(['write 0']);
    void submit('check', 'login');
    await settle();
    expect(started).toEqual(['write 0', 'login']);
  });

  it('gives a freed slot to a waiting check before the writes queued earlier', async () => {
    const { started, submit, finish } = harness(2);
    void submit('write', 'write 0');
    void submit('check', 'login 0');
    void submit('write', 'write 1');
    void submit('check', 'login 1');
    await settle();
    expect(started).toEqual(['write 0', 'login 0']);
    await finish('write 0');
    expect(started).toEqual(['write 0', 'login 0', 'login 1']);
    await finish('login 0');
    expect(started).toEqual(['write 0', 'login 0', 'login 1', 'write 1']);
  });

  it('lets writes use half of the slots, and checks all of them', async () => {
    const { started, submit } = harness(4);
    for (let i = 0; i < 4; i += 1) void submit('write', `write ${i}`);
    await settle();
    expect(started).toEqual(['write 0', 'write 1']);
    for (let i = 0; i < 3; i += 1) void submit('check', `login ${i}`);
    await settle();
    expect(started).toEqual(['write 0', 'write 1', 'login 0', 'login 1']);
  });

  it('shares a single slot, checks first', async () => {
    const { started, submit, finish } = harness(1);
    void submit('write', 'write 0');
    void submit('write', 'write 1');
    void submit('check', 'login');
    await settle();
    expect(started).toEqual(['write 0']);
    await finish('write 0');
    expect(started).toEqual(['write 0', 'login']);
  });

  it('frees the slot of a task that fails', async () => {
    const slots = hashingSlots(1);
    await expect(slots.run('write', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run('write', async () => 'next')).resolves.toBe('next');
  });
});
