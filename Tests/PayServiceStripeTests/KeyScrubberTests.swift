import PayServiceCore
import Testing

@testable import PayServiceStripe

/// What Stripe sends is read only after every key in it is replaced: the configured one, and
/// anything shaped like a key, whatever punctuation surrounds it.
@Suite("Key scrubber")
struct KeyScrubberTests {
  static let key = "sk_test_payservice_4eC39HqLyjWDarjtT1zdp7dc"
  let scrubber = KeyScrubber(key: key)

  @Test("keys in quotes, after = or :, in brackets, glued to words, masked or not, all become [a key]")
  func shapes() {
    let live = "sk_" + "live_" + "51HqLyjWDarjtT1zdp7dc"
    let cases = [
      ("Invalid API Key provided: sk_test_****************7dc", "Invalid API Key provided: [a key]"),
      ("key=\(live)&x=1", "key=[a key]&x=1"),
      ("key:\(live)", "key:[a key]"),
      (#"{"api_key":"rk_live_abcDEF123"}"#, #"{"api_key":"[a key]"}"#),
      ("'rk_test_abc', (pk_live_XYZ); <whsec_abc123>", "'[a key]', ([a key]); <[a key]>"),
      ("Bearer \(live).", "Bearer [a key]."),
      ("secret:\(live)\(live)", "secret:[a key]"),
      ("the key \(Self.key)!", "the key [a key]!"),
      ("prefix\(Self.key)-suffix", "prefix[a key]-suffix"),
      ("No such payment_intent: 'pi_123'; sk_ and rk_test alone are fine", "No such payment_intent: 'pi_123'; sk_ and rk_test alone are fine"),
      ("whsec_", "[a key]"),
      ("", ""),
    ]
    for (text, expected) in cases {
      #expect(scrubber.scrubbed(text) == expected, "\(text)")
    }
  }

  @Test("the configured key goes whatever it is made of; an empty one matches nothing")
  func configuredKey() {
    let odd = KeyScrubber(key: "not-a-stripe-shape.42")
    #expect(odd.scrubbed("got not-a-stripe-shape.42 here") == "got [a key] here")
    #expect(KeyScrubber(key: "").scrubbed("nothing to see") == "nothing to see")
  }

  @Test("every string of a JSON answer is scrubbed, object keys too; numbers and the shape stay")
  func json() throws {
    let answer = try JSONParser.parse(
      #"{"error":{"message":"Invalid API Key provided: sk_test_***7dc","type":"invalid_request_error","code":"x=rk_live_abc","param":["a","whsec_zz",1]},"sk_test_k":2}"#)
    let expected = try JSONParser.parse(
      #"{"error":{"message":"Invalid API Key provided: [a key]","type":"invalid_request_error","code":"x=[a key]","param":["a","[a key]",1]},"[a key]":2}"#)
    #expect(scrubber.scrubbed(answer) == expected)
  }
}
