import Foundation
import PayServiceCore
import Testing

/// payservice's verdicts on Adyen's notification signatures beside those of Adyen's own Python
/// library: its documented vector and signed notifications (Fixtures/*_notification.json, from the
/// library's tests), and items it signed and judged (Fixtures/adyen-hmac-vectors.json, written by
/// scripts/adyen-hmac-vectors.py). The library is MIT-licensed (Fixtures/adyen-python-api-library.LICENSE.md).
@Suite("Adyen notification signatures")
struct AdyenNotificationSignatureTests {
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

  static func body(items: [String]) -> String {
    #"{"live":"false","notificationItems":["# + items.map { #"{"NotificationRequestItem":\#($0)}"# }
      .joined(separator: ",") + "]}"
  }

  static func onlyItem(_ itemJSON: String) throws -> AdyenNotification.Item {
    let notification = try AdyenNotification.read(body(items: [itemJSON])).get()
    return try #require(notification.items.count == 1 ? notification.items[0] : nil)
  }

  static func key(_ hex: String) throws -> [UInt8] {
    try AdyenNotificationSignature.keys(in: hex, variable: "ADYEN_HMAC_KEY").get()[0]
  }

  @Test("the library's documented vector: the same signature, byte for byte")
  func documentedVector() throws {
    // test/UtilTest.py, test_notification_request_item_hmac.
    let item = try Self.onlyItem(
      #"{"pspReference":"7914073381342284","merchantReference":"TestPayment-1407325143704","merchantAccountCode":"TestMerchant","amount":{"currency":"EUR","value":1130},"eventCode":"AUTHORISATION","success":"true","eventDate":"2019-05-06T17:15:34.121+02:00","operations":["CANCEL","CAPTURE","REFUND"],"paymentMethod":"visa"}"#
    )
    let key = try Self.key("44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056")
    #expect(
      AdyenNotificationSignature.signedText(item)
        == "7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:AUTHORISATION:true")
    #expect(AdyenNotificationSignature.signature(item, key: key) == "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=")
  }

  @Test(
    "the library's signed notifications with colons and slashes verify under its key, and under no other",
    arguments: ["backslash", "colon", "forwardslash", "mixed"])
  func librarysNotifications(name: String) throws {
    let text = try String(contentsOf: Self.fixtures.appendingPathComponent("\(name)_notification.json"), encoding: .utf8)
    let item = try Self.onlyItem(text)
    let key = try Self.key("74F490DD33F7327BAECC88B2947C011FC02D014A473AAA33A8EC93E4DC069174")
    let other = try Self.key("44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056")
    #expect(AdyenNotificationSignature.isValid(item, keys: [key]))
    #expect(!AdyenNotificationSignature.isValid(item, keys: [other]))
    #expect(AdyenNotificationSignature.isValid(item, keys: [other, key]))
  }

  struct Vector {
    var name: String
    var itemJSON: String
    var valid: [String: Bool]
  }

  static func vectors() throws -> (keys: [String: [UInt8]], vectors: [Vector]) {
    let data = try Data(contentsOf: fixtures.appendingPathComponent("adyen-hmac-vectors.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let keyTexts = try #require(root["keys"] as? [String: String])
    var keys: [String: [UInt8]] = [:]
    for (label, hex) in keyTexts { keys[label] = try key(hex) }
    let list = try #require(root["vectors"] as? [[String: Any]])
    let vectors = try list.map { entry in
      let item = try #require(entry["item"])
      let json = try JSONSerialization.data(withJSONObject: item, options: [.sortedKeys, .withoutEscapingSlashes])
      return Vector(
        name: try #require(entry["name"] as? String), itemJSON: String(decoding: json, as: UTF8.self),
        valid: try #require(entry["valid"] as? [String: Bool]))
    }
    return (keys, vectors)
  }

  @Test("every vector gets the library's verdict under each key, and under both keys during a rotation")
  func libraryVerdicts() throws {
    let (keys, vectors) = try Self.vectors()
    #expect(vectors.count == 20)
    #expect(vectors.filter { $0.valid.values.contains(true) }.count == 10)
    for vector in vectors {
      let item = try Self.onlyItem(vector.itemJSON)
      for (label, key) in keys {
        #expect(
          AdyenNotificationSignature.isValid(item, keys: [key]) == vector.valid[label], "\(vector.name) under \(label)")
      }
      let any = vector.valid.values.contains(true)
      #expect(AdyenNotificationSignature.isValid(item, keys: Array(keys.values)) == any, "\(vector.name) under both")
    }
  }

  @Test("a signature that is missing, not base64, or of another length is not valid")
  func unusableSignatures() throws {
    let key = try Self.key("44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056")
    let unsigned = #"{"pspReference":"7914073381342284","merchantReference":"TestPayment-1407325143704","merchantAccountCode":"TestMerchant","amount":{"currency":"EUR","value":1130},"eventCode":"AUTHORISATION","success":"true"}"#
    #expect(!AdyenNotificationSignature.isValid(try Self.onlyItem(unsigned), keys: [key]))
    for signature in ["", "not base64!", "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0", "AAAA", String(repeating: "A", count: 88)] {
      let signed = unsigned.dropLast() + #","additionalData":{"hmacSignature":"\#(signature)"}}"#
      #expect(!AdyenNotificationSignature.isValid(try Self.onlyItem(String(signed)), keys: [key]), "\(signature)")
    }
    let good = unsigned.dropLast() + #","additionalData":{"hmacSignature":"coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0="}}"#
    let item = try Self.onlyItem(String(good))
    #expect(AdyenNotificationSignature.isValid(item, keys: [key]))
    #expect(!AdyenNotificationSignature.isValid(item, keys: []))
  }

  @Test("keys: one, or two during a rotation, each 32 to 128 hex digits; the message never shows a key")
  func keySettings() throws {
    let a = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
    let b = "74f490dd33f7327baecc88b2947c011fc02d014a473aaa33a8ec93e4dc069174"
    #expect(try AdyenNotificationSignature.keys(in: "\(a), \(b)", variable: "ADYEN_HMAC_KEY").get().count == 2)
    #expect(try AdyenNotificationSignature.keys(in: " \(b)\n", variable: "ADYEN_HMAC_KEY").get() == [Self.key(b)])
    func problem(_ value: String) -> String? {
      if case .failure(let problem) = AdyenNotificationSignature.keys(in: value, variable: "ADYEN_HMAC_KEY") {
        return problem.description
      }
      return nil
    }
    #expect(problem("") == "ADYEN_HMAC_KEY is empty")
    #expect(problem("\(a),\(b),\(a)") == "ADYEN_HMAC_KEY holds 3 keys; at most 2 (during a rotation)")
    #expect(
      problem("\(a),\(b.dropLast())")
        == "ADYEN_HMAC_KEY's key 2 is not an HMAC key as Adyen's Customer Area shows it (32 to 128 hex digits)")
    #expect(
      problem("abcd") == "ADYEN_HMAC_KEY's key 1 is not an HMAC key as Adyen's Customer Area shows it (32 to 128 hex digits)")
    #expect(
      problem(String(repeating: "ab", count: 65))
        == "ADYEN_HMAC_KEY's key 1 is not an HMAC key as Adyen's Customer Area shows it (32 to 128 hex digits)")
  }

  @Test("a body that is not an Adyen notification says where and what is valid")
  func malformedBodies() {
    func message(_ body: String) -> String? {
      if case .failure(let malformed) = AdyenNotification.read(body) { return malformed.message }
      return nil
    }
    let item = #"{"pspReference":"P","merchantAccountCode":"M","merchantReference":"R","amount":{"currency":"EUR","value":1},"eventCode":"CAPTURE","success":"true"}"#
    #expect(message(Self.body(items: [item])) == nil)
    #expect(message("[]") == "the body is not a JSON object")
    #expect(message("{\"live\":false,\"notificationItems\":[]}") == "live must be \"true\" or \"false\"")
    #expect(message("{\"live\":\"false\",\"notificationItems\":[]}") == "notificationItems must be a non-empty array")
    #expect(
      message(Self.body(items: [item, "[]"])) == "notificationItems[1].NotificationRequestItem must be an object")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"value\":1", with: "\"value\":1.5")]))
        == "notificationItems[0].NotificationRequestItem.amount.value must be a whole number of minor units, 0 to 9999999999999999")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"value\":1", with: "\"value\":-1")]))
        == "notificationItems[0].NotificationRequestItem.amount.value must be a whole number of minor units, 0 to 9999999999999999")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"value\":1", with: "\"value\":12345678901234567")]))
        == "notificationItems[0].NotificationRequestItem.amount.value must be a whole number of minor units, 0 to 9999999999999999")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"success\":\"true\"", with: "\"success\":true")]))
        == "notificationItems[0].NotificationRequestItem.success must be a string")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"success\":\"true\"", with: "\"success\":\"yes\"")]))
        == "notificationItems[0].NotificationRequestItem.success must be \"true\" or \"false\"")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"pspReference\":\"P\",", with: "")]))
        == "notificationItems[0].NotificationRequestItem.pspReference is missing")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"currency\":\"EUR\"", with: "\"currency\":null")]))
        == "notificationItems[0].NotificationRequestItem.amount.currency must be a string")
    #expect(
      message(Self.body(items: [item.replacingOccurrences(of: "\"R\"", with: "\"\(String(repeating: "r", count: 1025))\"")]))
        == "notificationItems[0].NotificationRequestItem.merchantReference must be at most 1024 bytes")
    let many = Self.body(items: Array(repeating: item, count: 1_001))
    #expect(message(many) == "notificationItems has 1001 items, more than 1000")
    let huge = "{\"live\":\"false\",\"pad\":\"\(String(repeating: "x", count: 1 << 20))\"}"
    #expect(message(huge) == "the body is \(huge.utf8.count) bytes, more than 1048576")
  }
}
