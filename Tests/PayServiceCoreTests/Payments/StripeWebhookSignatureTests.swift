import PayServiceCore
import Testing

/// Stripe's webhook signature scheme. The expected signatures are Python's
/// `hmac.new(secret, b"t.payload", sha256).hexdigest()`, computed outside payservice;
/// scripts/stripe-webhook-golden.py --check also checks the golden transcript's headers with
/// Stripe's official library.
@Suite("Stripe webhook signatures")
struct StripeWebhookSignatureTests {
  static let secret = "whsec_test_secret"
  static let payload = #"{"id":"evt_1","object":"event"}"#
  static let t: Int64 = 1_700_000_000
  static let v1 = "0c8670ed117751cc551a20e35839447075c42800ea3cf3e8a2fbda99cd1e6edd"

  @Test("the header payservice makes is Stripe's: t and the hex HMAC-SHA256 of t.payload")
  func header() {
    #expect(StripeWebhookSignature.header(payload: Self.payload, secret: Self.secret, timestamp: Self.t) == "t=1700000000,v1=\(Self.v1)")
    // The payload is signed as UTF-8 bytes.
    #expect(
      StripeWebhookSignature.header(payload: "café ☕", secret: Self.secret, timestamp: Self.t)
        == "t=1700000000,v1=1da0df0bffa246eef084db9524a84703f5fb3209a7c4ce8d12c86f826b4f9634")
  }

  @Test(
    "each delivery is verified or refused with its reason",
    arguments: [
      ("t=1700000000,v1=\(v1)", [secret], t, nil),
      // Upper-case hex and spaces around the items are read too (Stripe sends neither).
      (" t=1700000000 , v1=\(v1.uppercased())", [secret], t, nil),
      // Two v1 (the old and new secret's), one good; a v0 is ignored.
      ("t=1700000000,v1=\(String(repeating: "0", count: 64)),v1=\(v1),v0=\(v1)", [secret], t, nil),
      // Two secrets during a roll.
      ("t=1700000000,v1=\(v1)", ["whsec_old", secret], t, nil),
      ("t=1700000000,v1=\(v1)", ["whsec_other"], t, .noMatchingSignature),
      ("t=1700000001,v1=\(v1)", [secret], t, .noMatchingSignature),
      ("t=1700000000,v0=\(v1)", [secret], t, .malformedHeader("has no v1= signature")),
      ("t=1700000000,v1=\(v1.dropLast())", [secret], t, .malformedHeader("has no v1= signature")),
      ("v1=\(v1)", [secret], t, .malformedHeader("has no t= timestamp")),
      ("", [secret], t, .malformedHeader("has no t= timestamp")),
      ("t=-5,v1=\(v1)", [secret], t, .malformedHeader("has a t= that is not one Unix time in seconds")),
      ("t=1700000000,t=1700000000,v1=\(v1)", [secret], t, .malformedHeader("has a t= that is not one Unix time in seconds")),
      ("t=99999999999999999999,v1=\(v1)", [secret], t, .malformedHeader("has a t= that is not one Unix time in seconds")),
      ("t=1700000000,v1=\(v1)", [secret], t + 300, nil),
      ("t=1700000000,v1=\(v1)", [secret], t + 301, .staleTimestamp(ageSeconds: 301)),
      ("t=1700000000,v1=\(v1)", [secret], t - 300, nil),
      ("t=1700000000,v1=\(v1)", [secret], t - 301, .futureTimestamp(aheadSeconds: 301)),
      // No secret at all verifies nothing.
      ("t=1700000000,v1=\(v1)", [""], t, .noMatchingSignature),
    ] as [(String, [String], Int64, StripeWebhookSignature.Failure?)])
  func verify(header: String, secrets: [String], now: Int64, expected: StripeWebhookSignature.Failure?) {
    #expect(StripeWebhookSignature.verify(payload: Self.payload, header: header, secrets: secrets, now: now) == expected)
  }

  @Test("a tampered payload is refused; the stale check comes only after the signature")
  func tampered() {
    let header = "t=1700000000,v1=\(Self.v1)"
    #expect(
      StripeWebhookSignature.verify(payload: Self.payload + " ", header: header, secrets: [Self.secret], now: Self.t)
        == .noMatchingSignature)
    // A bad signature with an old timestamp says the signature, not the time: an unsigned time is not trusted.
    #expect(
      StripeWebhookSignature.verify(payload: "x", header: header, secrets: [Self.secret], now: Self.t + 10_000)
        == .noMatchingSignature)
  }

  @Test("the environment variable may hold several secrets, separated by commas or spaces")
  func secrets() {
    #expect(StripeWebhookSignature.secrets(in: "whsec_a") == ["whsec_a"])
    #expect(StripeWebhookSignature.secrets(in: "whsec_a,whsec_b") == ["whsec_a", "whsec_b"])
    #expect(StripeWebhookSignature.secrets(in: " whsec_a ,\nwhsec_b ") == ["whsec_a", "whsec_b"])
    #expect(StripeWebhookSignature.secrets(in: "") == [])
  }

  @Test("the messages name the check and never the secret or a signature")
  func messages() {
    #expect(
      StripeWebhookSignature.Failure.staleTimestamp(ageSeconds: 301).message
        == "the signature's timestamp is 301 s old, more than the 300 s allowed")
    #expect(
      StripeWebhookSignature.Failure.futureTimestamp(aheadSeconds: 400).message
        == "the signature's timestamp is 400 s ahead of the service clock, more than the 300 s allowed")
    #expect(
      StripeWebhookSignature.Failure.noMatchingSignature.message
        == "no v1 signature in the Stripe-Signature header matches the payload under the webhook secret")
    #expect(
      StripeWebhookSignature.Failure.malformedHeader("has no t= timestamp").message
        == "the Stripe-Signature header has no t= timestamp")
  }
}
