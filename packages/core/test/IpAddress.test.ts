import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { CallbackUrl, IpAddress } from "../src/index.js"

describe("IpAddress", () => {
  it("reads IPv4 in every form a URL parser accepts", () => {
    for (const text of ["127.0.0.1", "127.1", "127.0.1", "0x7f000001", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.0.0.1.", "017700000001"]) {
      expect([text, IpAddress.parse(text)]).toEqual([text, { version: 4, value: 0x7f000001 }])
    }
    for (const text of ["256.0.0.1", "1.2.3.4.5", "08.0.0.1", "1..1", "", "a.b.c.d", "4294967296"]) expect([text, IpAddress.parse(text)]).toEqual([text, null])
  })

  it("reads IPv6, compressed, bracketed, with an IPv4 tail", () => {
    expect(IpAddress.parseIpv6("[::1]")).toEqual([0, 0, 0, 0, 0, 0, 0, 1])
    expect(IpAddress.parseIpv6("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1])
    expect(IpAddress.parseIpv6("2001:db8::8a2e:370:7334")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0x8a2e, 0x370, 0x7334])
    for (const bad of ["1:2:3:4:5:6:7:8:9", "1::2::3", "fe80::1%eth0", "::ffff:1.2.3", "12345::", ":::"]) expect([bad, IpAddress.parseIpv6(bad)]).toEqual([bad, null])
  })

  it("names a kind with its article for messages", () => {
    expect(["unspecified", "loopback", "link-local", "private"].map((k) => IpAddress.withArticle(k as IpAddress.Kind))).toEqual(["an unspecified", "a loopback", "a link-local", "a private"])
  })

  it("classifies addresses by the range they reach", () => {
    const cases: ReadonlyArray<readonly [string, IpAddress.Kind]> = [
      ["8.8.8.8", "public"], ["93.184.216.34", "public"], ["127.0.0.1", "loopback"], ["127.255.255.254", "loopback"],
      ["10.1.2.3", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["172.32.0.1", "public"],
      ["192.168.0.1", "private"], ["100.64.0.1", "carrier-grade-nat"], ["100.100.100.200", "carrier-grade-nat"],
      ["169.254.169.254", "link-local"], ["0.0.0.0", "unspecified"], ["0.1.2.3", "unspecified"], ["224.0.0.1", "multicast"],
      ["255.255.255.255", "broadcast"], ["240.0.0.1", "reserved"], ["198.18.0.1", "reserved"], ["192.0.2.1", "documentation"],
      ["::1", "loopback"], ["::", "unspecified"], ["::ffff:127.0.0.1", "loopback"], ["::ffff:a9fe:a9fe", "link-local"],
      ["::ffff:8.8.8.8", "public"], ["64:ff9b::a9fe:a9fe", "link-local"], ["2002:7f00:1::", "loopback"], ["2002:0808:0808::", "reserved"],
      ["fc00::1", "private"], ["fd00:ec2::254", "private"], ["fe80::1", "link-local"], ["ff02::1", "multicast"],
      ["2001:db8::1", "documentation"], ["2001::1", "reserved"], ["2606:4700:4700::1111", "public"], ["4000::1", "reserved"],
      // Azure's platform address (and its IPv4-mapped form), the ones beside it public; 3fff::/20 (RFC 9637).
      ["168.63.129.16", "reserved"], ["::ffff:168.63.129.16", "reserved"], ["168.63.129.15", "public"], ["168.63.129.17", "public"],
      ["3fff::1", "documentation"], ["3fff:fff:ffff::1", "documentation"], ["3fff:1000::1", "public"], ["3ffe::1", "public"]
    ]
    for (const [text, kind] of cases) expect([text, IpAddress.classify(text)]).toEqual([text, kind])
    expect(IpAddress.classify("example.com")).toBeNull()
    expect(IpAddress.isAllowed("loopback", false)).toBe(false)
    expect(IpAddress.isAllowed("loopback", true)).toBe(true)
    expect(IpAddress.isAllowed("link-local", true)).toBe(false)
  })
})

describe("CallbackUrl", () => {
  it("accepts public http(s) URLs and refuses internal, malformed and credentialed ones", () => {
    const ok = (url: string, allowPrivate = false) => CallbackUrl.check(url, { allowPrivate })._tag
    expect(ok("https://shop.example/cb")).toBe("Success")
    expect(ok("http://[2606:4700:4700::1111]:8443/cb")).toBe("Success")
    for (const url of ["http://0x7f000001/", "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://localhost/", "http://intranet/", "ftp://x.example/", "https://a:b@shop.example/", "http://169.254.169.254/", "http://168.63.129.16/", "http://[3fff::1]/"]) {
      expect([url, ok(url)]).toEqual([url, "Failure"])
    }
    expect(ok("http://localhost:3000/cb", true)).toBe("Success")
    expect(ok("http://169.254.169.254/", true)).toBe("Failure")
    expect(ok("https://a:b@localhost/", true)).toBe("Failure")
    expect(ok(`https://shop.example/${"x".repeat(2048)}`)).toBe("Failure")
    // Port 0 parses, but nothing can be reached on it.
    expect(CallbackUrl.check("https://shop.example:0/cb", { allowPrivate: false })).toEqual(Result.fail("callback_url must not use port 0"))
    expect(ok("http://localhost:0/cb", true)).toBe("Failure")
    expect(ok("https://shop.example:1/cb")).toBe("Success")
  })
})
