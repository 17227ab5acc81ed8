import Crypto
import Foundation

/// A notification Adyen sends to the merchant's webhook endpoint (Adyen's "standard webhook"): a JSON
/// body `{"live": "false", "notificationItems": [{"NotificationRequestItem": {…}}, …]}`, a batch of
/// items, each about one payment or modification and each signed on its own
/// (`additionalData.hmacSignature`, `AdyenNotificationSignature`).
///
/// Reading takes the body's shape only: every member an item is verified by, and what the books use,
/// must be present with its documented type, and bounded. Nothing an item claims is used before its
/// signature is verified.
public struct AdyenNotification: Sendable, Equatable {
  /// Adyen's bodies are a few KiB; a body larger than this is not one.
  public static let maxPayloadBytes = 1 << 20
  /// Adyen batches a handful of items; more than this is not a delivery of Adyen's.
  public static let maxItems = 1_000
  /// The longest text member read (Adyen's references are at most 80 characters, its reasons a
  /// sentence).
  public static let maxTextBytes = 1_024

  /// One `NotificationRequestItem`.
  public struct Item: Sendable, Equatable {
    /// Adyen's reference of what the item is about: the payment for AUTHORISATION, the
    /// modification (capture, refund, cancel) or dispute stage for the others.
    public var pspReference: String
    /// For a modification or dispute: the payment's pspReference. nil when absent.
    public var originalReference: String?
    public var merchantAccountCode: String
    /// The reference the merchant sent (payservice sends the order id, or its refund id).
    public var merchantReference: String
    /// `amount.value` as its JSON text: the signature covers this text.
    public var value: String
    public var currency: String
    public var eventCode: String
    /// `success` as sent: "true" or "false".
    public var success: String
    /// `eventDate` as sent (ISO 8601 with an offset); nil when absent.
    public var eventDate: String?
    /// `reason` as sent: a refusal's reason, a chargeback's reason code and text; nil when absent.
    public var reason: String?
    /// `additionalData.hmacSignature`; nil when absent (such an item cannot be verified).
    public var hmacSignature: String?
    /// The other `additionalData` members whose values are text (chargeback details, the stored
    /// payment method id): read only once the item is verified.
    public var additionalData: [String: String]

    public init(
      pspReference: String, originalReference: String?, merchantAccountCode: String, merchantReference: String,
      value: String, currency: String, eventCode: String, success: String, eventDate: String?, reason: String?,
      hmacSignature: String?, additionalData: [String: String]
    ) {
      self.pspReference = pspReference
      self.originalReference = originalReference
      self.merchantAccountCode = merchantAccountCode
      self.merchantReference = merchantReference
      self.value = value
      self.currency = currency
      self.eventCode = eventCode
      self.success = success
      self.eventDate = eventDate
      self.reason = reason
      self.hmacSignature = hmacSignature
      self.additionalData = additionalData
    }

    /// The amount in minor units.
    public var amountMinor: Int64 { Int64(value) ?? 0 }
    public var succeeded: Bool { success == "true" }
  }

  /// `live` as sent: "true" for Adyen's live platform.
  public var live: String
  public var items: [Item]

  /// Why a body is not an Adyen notification.
  public struct Malformed: Error, Equatable, Sendable {
    /// Where, as a path into the body (`notificationItems[2].NotificationRequestItem.amount.value`),
    /// and what is valid there.
    public var message: String
  }

  /// Reads `payload`'s shape; nothing in it is trusted yet.
  public static func read(_ payload: String) -> Result<AdyenNotification, Malformed> {
    guard payload.utf8.count <= maxPayloadBytes else {
      return .failure(Malformed(message: "the body is \(payload.utf8.count) bytes, more than \(maxPayloadBytes)"))
    }
    guard let value = try? JSONParser.parse(payload), case .object(let body) = value else {
      return .failure(Malformed(message: "the body is not a JSON object"))
    }
    guard case .string(let live)? = body["live"], live == "true" || live == "false" else {
      return .failure(Malformed(message: "live must be \"true\" or \"false\""))
    }
    guard case .array(let entries)? = body["notificationItems"], !entries.isEmpty else {
      return .failure(Malformed(message: "notificationItems must be a non-empty array"))
    }
    guard entries.count <= maxItems else {
      return .failure(Malformed(message: "notificationItems has \(entries.count) items, more than \(maxItems)"))
    }
    var items: [Item] = []
    items.reserveCapacity(entries.count)
    for (index, entry) in entries.enumerated() {
      let path = "notificationItems[\(index)].NotificationRequestItem"
      guard case .object(let wrapper) = entry, case .object(let object)? = wrapper["NotificationRequestItem"] else {
        return .failure(Malformed(message: "\(path) must be an object"))
      }
      switch item(object, path) {
      case .success(let item): items.append(item)
      case .failure(let malformed): return .failure(malformed)
      }
    }
    return .success(AdyenNotification(live: live, items: items))
  }

  static func item(_ object: JSONObject, _ path: String) -> Result<Item, Malformed> {
    func text(_ name: String, required: Bool, in object: JSONObject = object, at place: String = path) throws(Malformed)
      -> String?
    {
      switch object[name] {
      case nil:
        if required { throw Malformed(message: "\(place).\(name) is missing") }
        return nil
      case .string(let value)?:
        guard value.utf8.count <= maxTextBytes else {
          throw Malformed(message: "\(place).\(name) must be at most \(maxTextBytes) bytes")
        }
        return value
      default: throw Malformed(message: "\(place).\(name) must be a string")
      }
    }
    do throws(Malformed) {
      guard case .object(let amount)? = object["amount"] else {
        throw Malformed(message: "\(path).amount must be an object with value and currency")
      }
      guard case .number(let value)? = amount["value"], !value.isEmpty, value.utf8.count <= 16,
        value.utf8.allSatisfy({ (0x30...0x39).contains($0) })
      else {
        throw Malformed(message: "\(path).amount.value must be a whole number of minor units, 0 to 9999999999999999")
      }
      let currency = try text("currency", required: true, in: amount, at: "\(path).amount")!
      let success = try text("success", required: true)!
      guard success == "true" || success == "false" else {
        throw Malformed(message: "\(path).success must be \"true\" or \"false\"")
      }
      var additional: [String: String] = [:]
      var signature: String?
      switch object["additionalData"] {
      case nil: break
      case .object(let data)?:
        guard data.members.count <= 200 else {
          throw Malformed(message: "\(path).additionalData has more than 200 members")
        }
        for member in data.members {
          guard case .string(let text) = member.value, text.utf8.count <= maxTextBytes,
            member.key.utf8.count <= 128
          else { continue }
          if member.key == "hmacSignature" { signature = text } else { additional[member.key] = text }
        }
      default: throw Malformed(message: "\(path).additionalData must be an object")
      }
      return .success(
        Item(
          pspReference: try text("pspReference", required: true)!,
          originalReference: try text("originalReference", required: false),
          merchantAccountCode: try text("merchantAccountCode", required: true)!,
          merchantReference: try text("merchantReference", required: true)!, value: value, currency: currency,
          eventCode: try text("eventCode", required: true)!, success: success,
          eventDate: try text("eventDate", required: false), reason: try text("reason", required: false),
          hmacSignature: signature, additionalData: additional))
    } catch {
      return .failure(error)
    }
  }
}

/// Adyen's HMAC signature of a notification item, as Adyen documents it ("Verify HMAC signatures"):
/// the HMAC-SHA256, under the hex-decoded HMAC key of the merchant's webhook, of
/// `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`
/// (an absent member as the empty string), base64-encoded, sent as `additionalData.hmacSignature`.
public enum AdyenNotificationSignature {
  /// The text an item's signature covers.
  public static func signedText(_ item: AdyenNotification.Item) -> String {
    [
      item.pspReference, item.originalReference ?? "", item.merchantAccountCode, item.merchantReference, item.value,
      item.currency, item.eventCode, item.success,
    ].joined(separator: ":")
  }

  /// Whether `item` carries a signature one of `keys` made. Compared in constant time
  /// (swift-crypto's HMAC validation).
  public static func isValid(_ item: AdyenNotification.Item, keys: [[UInt8]]) -> Bool {
    guard let text = item.hmacSignature, text.utf8.count <= 64, let signature = Data(base64Encoded: text),
      signature.count == SHA256.byteCount
    else { return false }
    let signed = Data(signedText(item).utf8)
    var valid = false
    for key in keys where !key.isEmpty {
      if HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: SymmetricKey(data: key)) {
        valid = true
      }
    }
    return valid
  }

  /// The signature Adyen would send for `item` under `key`: for the tests.
  public static func signature(_ item: AdyenNotification.Item, key: [UInt8]) -> String {
    Data(HMAC<SHA256>.authenticationCode(for: Data(signedText(item).utf8), using: SymmetricKey(data: key)))
      .base64EncodedString()
  }

  /// Why an HMAC key setting cannot be used (the key itself never appears in it).
  public struct KeyProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
  }

  /// The keys in an environment variable's value: one, or two separated by a comma or whitespace
  /// while the webhook's key is replaced in Adyen's Customer Area. Each is hex, as the Customer
  /// Area shows it, of 16 to 64 bytes.
  public static func keys(in value: String, variable: String) -> Result<[[UInt8]], KeyProblem> {
    let parts = value.split(whereSeparator: { $0 == "," || $0.isWhitespace })
    guard !parts.isEmpty else { return .failure(KeyProblem(description: "\(variable) is empty")) }
    guard parts.count <= 2 else {
      return .failure(KeyProblem(description: "\(variable) holds \(parts.count) keys; at most 2 (during a rotation)"))
    }
    var keys: [[UInt8]] = []
    for (index, part) in parts.enumerated() {
      guard let key = Hex.decode(String(part)), (16...64).contains(key.count) else {
        return .failure(
          KeyProblem(
            description:
              "\(variable)'s key \(index + 1) is not an HMAC key as Adyen's Customer Area shows it (32 to 128 hex digits)"))
      }
      keys.append(key)
    }
    return .success(keys)
  }
}
