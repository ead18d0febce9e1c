/**
 * Which client an address stands for in per-client limits (framework/base/proxy.ts addressKey):
 * IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4, any other IPv6 address by its /64.
 */
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../src/framework/base/proxy.js';

describe('addressKey', () => {
  it('keeps IPv4 as it is, and reads a mapped IPv6 address as its IPv4', () => {
    expect(addressKey('203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressKey('::FFFF:cb00:7109')).toBe('203.0.113.9');
  });

  it('names an IPv6 address by its /64, however it is written', () => {
    const key = addressKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:fffe')).toBe(key);
    expect(addressKey('2001:db8:1:2:0:0:0:0')).toBe(key);
    expect(addressKey('2001:db8:1:3::1')).not.toBe(key);
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('::')).toBe('0:0:0:0::/64');
    expect(addressKey('2001:db8::1.2.3.4')).toBe('2001:db8:0:0::/64');
  });
});
