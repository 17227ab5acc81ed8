import Foundation
import SwiftASN1

/// Why a receipt could not be read, worded for the developer of the app that sent it: what was
/// expected where, and what was found instead.
public struct AppReceiptFailure: Error, Equatable, Sendable {
  public var message: String

  public init(_ message: String) {
    self.message = message
  }
}

/// The purchases named in the receipts that apps on original StoreKit send to their server.
///
/// An app receipt is base64 of a PKCS#7 (CMS) `ContentInfo` whose content is a `SignedData`; the
/// `SignedData` encapsulates content of type `data` (1.2.840.113549.1.7.1), an OCTET STRING that
/// is the receipt payload: a `SET OF ReceiptAttribute`, each a
/// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }` (Apple's "Receipt Fields").
/// Type 2 is the bundle identifier, and each attribute of type 17 is one in-app purchase receipt,
/// whose value is again a `SET OF ReceiptAttribute`: 1701 quantity (INTEGER), 1702 product
/// identifier, 1703 transaction identifier and 1705 original transaction identifier (UTF8String).
/// Attribute types not read here are skipped, as Apple asks; of an attribute type that occurs
/// twice in one set, the first is read. Apple's receipts are BER (indefinite lengths, a
/// constructed OCTET STRING around the payload), so every level is read with BER's rules.
///
/// **The receipt's signature is not verified.** What is read here only names transactions to ask
/// the App Store Server API about (Get Transaction History with any of the customer's transaction
/// identifiers), whose answers Apple signs and `AppStoreSignedDataVerifier` verifies, as Apple
/// recommends and as its App Store Server Library's `ReceiptUtility` does. Nothing read here alone
/// may grant anything.
///
/// Input is bounded: at most ``maximumBase64Length`` characters of base64 (1 MiB) are read, and
/// SwiftASN1 refuses nesting deeper than 50 levels; a malformed receipt is refused with an
/// ``AppReceiptFailure``, never a trap.
public enum AppReceipt {
  /// The longest receipt read, in characters of base64 (1 MiB). App receipts are a few KiB, and
  /// grow by about 150 bytes for each in-app purchase they keep.
  public static let maximumBase64Length = 1 << 20

  /// One in-app purchase receipt (an attribute of type 17) of an app receipt.
  public struct InAppPurchase: Equatable, Sendable {
    /// The transaction identifier (type 1703).
    public var transactionId: String
    /// The original transaction identifier (type 1705), when the receipt holds one.
    public var originalTransactionId: String?
    /// The product identifier (type 1702), when the receipt holds one.
    public var productId: String?
    /// The quantity (type 1701); nil when the receipt holds none, or one that does not fit `Int`.
    public var quantity: Int?

    public init(
      transactionId: String, originalTransactionId: String? = nil, productId: String? = nil, quantity: Int? = nil
    ) {
      self.transactionId = transactionId
      self.originalTransactionId = originalTransactionId
      self.productId = productId
      self.quantity = quantity
    }
  }

  /// What is read out of an app receipt: the app's bundle identifier and the in-app purchases, in
  /// the order the receipt lists them.
  public struct Contents: Equatable, Sendable {
    /// The bundle identifier (type 2), when the receipt holds one.
    public var bundleId: String?
    public var purchases: [InAppPurchase]
  }

  /// The bundle identifier and every in-app purchase of the base64 app receipt `receipt`. Line
  /// breaks in the base64 (as wrapped by some encoders) are skipped; any other character outside
  /// base64's alphabet is refused.
  public static func read(base64 receipt: String) throws(AppReceiptFailure) -> Contents {
    let bytes = try decodeBase64(receipt, what: "the receipt")
    return try payload(try encapsulatedContent(bytes))
  }

  /// Every in-app purchase of the base64 app receipt `receipt`, in receipt order; none for a
  /// receipt of an app that has sold nothing (or only consumables that were finished).
  public static func inAppPurchases(base64 receipt: String) throws(AppReceiptFailure) -> [InAppPurchase] {
    try read(base64: receipt).purchases
  }

  /// The transaction identifier of the receipt's first in-app purchase, or nil when it has none:
  /// what Apple's App Store Server Library's `ReceiptUtility.extractTransactionId(appReceipt:)`
  /// gives to call the App Store Server API with.
  public static func transactionId(fromAppReceipt receipt: String) throws(AppReceiptFailure) -> String? {
    try read(base64: receipt).purchases.first?.transactionId
  }

  /// The transaction identifier of a transaction receipt of the old format
  /// (`SKPaymentTransaction.transactionReceipt`): base64 of text holding
  /// `"purchase-info" = "<base64>";`, whose decoded text holds `"transaction-id" = "<id>";`. Read
  /// as Apple's `ReceiptUtility.extractTransactionId(transactionReceipt:)` reads it: the first
  /// entry of each that matches, the identifier being one or more of `A-Z a-z 0-9 + / =`, the
  /// blanks around `=` one or more of space, tab, line feed, carriage return, vertical tab or form
  /// feed. As for app receipts, nothing is verified.
  public static func transactionId(fromTransactionReceipt base64: String) throws(AppReceiptFailure) -> String {
    let bytes = try decodeBase64(base64, what: "the transaction receipt")
    guard String(validating: bytes, as: UTF8.self) != nil else {
      throw AppReceiptFailure(
        "the transaction receipt is not UTF-8 text (an app receipt, PKCS#7, is read by AppReceipt.read(base64:))")
    }
    guard let purchaseInfo = entry("purchase-info", in: bytes) else {
      throw AppReceiptFailure(#"the transaction receipt has no "purchase-info" = "<base64>"; entry"#)
    }
    guard let info = Data(base64Encoded: Data(purchaseInfo)) else {
      throw AppReceiptFailure("the transaction receipt's purchase-info is not base64")
    }
    let infoBytes = [UInt8](info)
    guard String(validating: infoBytes, as: UTF8.self) != nil else {
      throw AppReceiptFailure("the transaction receipt's purchase-info is not UTF-8 text")
    }
    guard let transactionId = entry("transaction-id", in: infoBytes) else {
      throw AppReceiptFailure(#"the transaction receipt's purchase-info has no "transaction-id" = "<id>"; entry"#)
    }
    return String(decoding: transactionId, as: UTF8.self)
  }

  // MARK: - Base64

  static func decodeBase64(_ text: String, what: String) throws(AppReceiptFailure) -> [UInt8] {
    guard text.utf8.count <= maximumBase64Length else {
      throw AppReceiptFailure(
        "\(what) is longer than \(maximumBase64Length) characters of base64 (1 MiB), more than any receipt")
    }
    let compact = text.utf8.filter { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
    guard !compact.isEmpty else { throw AppReceiptFailure("\(what) is empty") }
    guard let data = Data(base64Encoded: Data(compact)) else { throw AppReceiptFailure("\(what) is not base64") }
    return [UInt8](data)
  }

  // MARK: - PKCS#7 ContentInfo and SignedData

  static let signedDataType: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
  static let dataType: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
  static let explicitZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

  static func notSignedData(_ detail: String) -> AppReceiptFailure {
    AppReceiptFailure("the receipt is not a PKCS#7 SignedData: \(detail)")
  }

  /// The receipt payload: `ContentInfo { signedData, [0] SignedData { version, digestAlgorithms,
  /// encapContentInfo { data, [0] OCTET STRING }, … } }`. What follows the encapsulated content
  /// (certificates, signer infos) is not read, since the signature is not verified.
  static func encapsulatedContent(_ bytes: [UInt8]) throws(AppReceiptFailure) -> ArraySlice<UInt8> {
    let root: ASN1Node
    do {
      root = try BER.parse(bytes)
    } catch {
      if bytes.first == UInt8(ascii: "{") {
        throw notSignedData(
          "it is text beginning with \"{\", a transaction receipt of the old format"
            + " (read by AppReceipt.transactionId(fromTransactionReceipt:))")
      }
      throw notSignedData("its bytes are not ASN.1 (BER), or are cut short")
    }
    guard root.identifier == .sequence, case .constructed(let contentInfo) = root.content else {
      throw notSignedData("it is not a ContentInfo SEQUENCE")
    }
    var contentInfoFields = contentInfo.makeIterator()
    guard let contentTypeNode = contentInfoFields.next(),
      let contentType = try? ASN1ObjectIdentifier(berEncoded: contentTypeNode)
    else { throw notSignedData("its ContentInfo does not begin with a content type (an OBJECT IDENTIFIER)") }
    guard contentType == signedDataType else {
      throw notSignedData("its ContentInfo's content type is \(contentType), not signedData (\(signedDataType))")
    }
    guard let signedData = explicitlyTaggedZero(contentInfoFields.next()),
      signedData.identifier == .sequence, case .constructed(let signedDataFieldNodes) = signedData.content
    else { throw notSignedData("its ContentInfo has no [0] EXPLICIT SignedData SEQUENCE") }
    var signedDataFields = signedDataFieldNodes.makeIterator()
    guard let version = signedDataFields.next(), version.identifier == .integer,
      let digestAlgorithms = signedDataFields.next(), digestAlgorithms.identifier == .set,
      let encapContentInfo = signedDataFields.next(), encapContentInfo.identifier == .sequence,
      case .constructed(let encapFieldNodes) = encapContentInfo.content
    else {
      throw notSignedData(
        "its SignedData does not begin with a version INTEGER, a digestAlgorithms SET and an encapContentInfo SEQUENCE")
    }
    var encapFields = encapFieldNodes.makeIterator()
    guard let eContentTypeNode = encapFields.next(),
      let eContentType = try? ASN1ObjectIdentifier(berEncoded: eContentTypeNode)
    else { throw notSignedData("its encapContentInfo does not begin with a content type (an OBJECT IDENTIFIER)") }
    guard eContentType == dataType else {
      throw notSignedData("its encapsulated content is of type \(eContentType), not data (\(dataType))")
    }
    guard let eContentNode = encapFields.next() else {
      throw AppReceiptFailure("the receipt has no payload: its SignedData's encapsulated content is absent (detached)")
    }
    guard let eContent = explicitlyTaggedZero(eContentNode), let octets = try? ASN1OctetString(berEncoded: eContent)
    else {
      throw notSignedData("its encapsulated content is not an [0] EXPLICIT OCTET STRING")
    }
    return octets.bytes
  }

  /// The one node inside `node` when `node` is `[0]` (context-specific, constructed) holding
  /// exactly one node.
  static func explicitlyTaggedZero(_ node: ASN1Node?) -> ASN1Node? {
    guard let node, node.identifier == explicitZero, case .constructed(let inner) = node.content else { return nil }
    var nodes = inner.makeIterator()
    guard let only = nodes.next(), nodes.next() == nil else { return nil }
    return only
  }

  // MARK: - Receipt attributes

  /// Receipt attribute types read (Apple's "Receipt Fields").
  enum Field {
    static let bundleId = 2
    static let inAppPurchase = 17
    static let quantity = 1701
    static let productId = 1702
    static let transactionId = 1703
    static let originalTransactionId = 1705
  }

  struct Attribute {
    var type: Int
    var value: ArraySlice<UInt8>
  }

  static func payload(_ bytes: ArraySlice<UInt8>) throws(AppReceiptFailure) -> Contents {
    let attributes = try attributeSet(bytes, of: "the receipt payload")
    var bundleId: String?
    var purchases: [InAppPurchase] = []
    for attribute in attributes {
      switch attribute.type {
      case Field.bundleId where bundleId == nil:
        bundleId = try utf8String(attribute.value, "the bundle_id (type 2) of the receipt payload")
      case Field.inAppPurchase:
        purchases.append(try inAppPurchase(attribute.value, number: purchases.count + 1))
      default:
        continue
      }
    }
    return Contents(bundleId: bundleId, purchases: purchases)
  }

  static func inAppPurchase(_ bytes: ArraySlice<UInt8>, number: Int) throws(AppReceiptFailure) -> InAppPurchase {
    let place = "in-app purchase \(number)"
    var transactionId: String?
    var originalTransactionId: String?
    var productId: String?
    var quantity: Int?
    var quantitySeen = false
    for attribute in try attributeSet(bytes, of: place) {
      switch attribute.type {
      case Field.transactionId where transactionId == nil:
        transactionId = try utf8String(attribute.value, "the transaction_id (type 1703) of \(place)")
      case Field.originalTransactionId where originalTransactionId == nil:
        originalTransactionId = try utf8String(
          attribute.value, "the original_transaction_id (type 1705) of \(place)")
      case Field.productId where productId == nil:
        productId = try utf8String(attribute.value, "the product_id (type 1702) of \(place)")
      case Field.quantity where !quantitySeen:
        quantitySeen = true
        quantity = try integer(attribute.value, "the quantity (type 1701) of \(place)")
      default:
        continue
      }
    }
    guard let transactionId else { throw AppReceiptFailure("\(place) has no transaction_id (type 1703)") }
    return InAppPurchase(
      transactionId: transactionId, originalTransactionId: originalTransactionId, productId: productId, quantity: quantity)
  }

  /// The attributes of a `SET OF ReceiptAttribute` in the order they are encoded. `place` names
  /// the set in failures ("the receipt payload", "in-app purchase 2").
  static func attributeSet(_ bytes: ArraySlice<UInt8>, of place: String) throws(AppReceiptFailure) -> [Attribute] {
    guard let root = try? BER.parse(bytes), root.identifier == .set, case .constructed(let members) = root.content else {
      throw AppReceiptFailure("\(place) is not a SET of receipt attributes")
    }
    var attributes: [Attribute] = []
    for (index, member) in members.enumerated() {
      let name = "attribute \(index + 1) of \(place)"
      guard member.identifier == .sequence, case .constructed(let fieldNodes) = member.content else {
        throw AppReceiptFailure("\(name) is not a SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }")
      }
      var fields = fieldNodes.makeIterator()
      guard let typeNode = fields.next(), typeNode.identifier == .integer else {
        throw AppReceiptFailure("\(name) does not begin with its type, an INTEGER")
      }
      guard let type = try? Int(berEncoded: typeNode) else {
        throw AppReceiptFailure("\(name) has a type that is not a 64-bit INTEGER")
      }
      guard let version = fields.next(), version.identifier == .integer, case .primitive = version.content else {
        throw AppReceiptFailure("\(name) (type \(type)) has no version INTEGER after its type")
      }
      guard let valueNode = fields.next() else {
        throw AppReceiptFailure("\(name) (type \(type)) has no value")
      }
      guard let value = try? ASN1OctetString(berEncoded: valueNode) else {
        throw AppReceiptFailure("\(name) (type \(type)) has a value that is not an OCTET STRING")
      }
      guard fields.next() == nil else {
        throw AppReceiptFailure("\(name) (type \(type)) has more than type, version and value")
      }
      attributes.append(Attribute(type: type, value: value.bytes))
    }
    return attributes
  }

  /// The text of an attribute value holding a DER (or BER) UTF8String.
  static func utf8String(_ value: ArraySlice<UInt8>, _ name: String) throws(AppReceiptFailure) -> String {
    guard let node = try? BER.parse(value), let string = try? ASN1UTF8String(berEncoded: node),
      let text = String(validating: string.bytes, as: UTF8.self)
    else { throw AppReceiptFailure("\(name) is not a UTF8String") }
    return text
  }

  /// The number of an attribute value holding an INTEGER; nil when it does not fit `Int`.
  static func integer(_ value: ArraySlice<UInt8>, _ name: String) throws(AppReceiptFailure) -> Int? {
    guard let node = try? BER.parse(value), node.identifier == .integer, case .primitive(let content) = node.content,
      !content.isEmpty
    else { throw AppReceiptFailure("\(name) is not an INTEGER") }
    return try? Int(berEncoded: node)
  }

  // MARK: - The old transaction receipt's text

  /// The value of the first `"key" = "value";` entry of `text` whose value is one or more base64
  /// characters (`A-Z a-z 0-9 + / =`), with one or more blanks on each side of `=`. Each byte is
  /// looked at a bounded number of times: a candidate's scan stops at the first byte that does not
  /// fit, which is before the next candidate's opening quote.
  static func entry(_ key: String, in text: [UInt8]) -> ArraySlice<UInt8>? {
    let quotedKey = Array("\"\(key)\"".utf8)
    var start = 0
    while let at = firstOccurrence(of: quotedKey, in: text, from: start) {
      start = at + 1
      var index = at + quotedKey.count
      guard skipBlanks(text, &index), index < text.count, text[index] == UInt8(ascii: "=") else { continue }
      index += 1
      guard skipBlanks(text, &index), index < text.count, text[index] == UInt8(ascii: "\"") else { continue }
      index += 1
      let valueStart = index
      while index < text.count, isBase64Character(text[index]) { index += 1 }
      guard index > valueStart, index + 1 < text.count, text[index] == UInt8(ascii: "\""),
        text[index + 1] == UInt8(ascii: ";")
      else { continue }
      return text[valueStart..<index]
    }
    return nil
  }

  static func firstOccurrence(of needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
    guard let first = needle.first, text.count >= needle.count, start <= text.count - needle.count else { return nil }
    var index = start
    while index <= text.count - needle.count {
      if text[index] == first, text[index..<(index + needle.count)].elementsEqual(needle) { return index }
      index += 1
    }
    return nil
  }

  /// Moves `index` past blanks; true when there was at least one.
  static func skipBlanks(_ text: [UInt8], _ index: inout Int) -> Bool {
    let from = index
    while index < text.count, [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains(text[index]) { index += 1 }
    return index > from
  }

  static func isBase64Character(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
      return true
    default:
      return false
    }
  }
}
