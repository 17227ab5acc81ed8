import Foundation
import PayServiceCore
import SwiftASN1

/// App receipts for tests, shaped as the App Store's are: base64 of a PKCS#7 `ContentInfo` whose
/// `SignedData` encapsulates the receipt payload (a `SET OF ReceiptAttribute`) as `data`. They are
/// DER, carry no certificates and no signer (an empty `signerInfos` SET): payservice does not
/// verify a receipt's signature, it only reads which transactions to ask the App Store Server API
/// about. Attributes are written in the order given (not sorted as DER's SET OF would be), so that
/// a receipt lists its purchases in the order of the test's array.
public enum AppReceiptBuilder {
  /// A receipt for `bundleId` holding `purchases` in order, each an in-app purchase receipt
  /// (type 17) with its transaction identifier, and its original transaction identifier, product
  /// identifier and quantity when given.
  public static func receipt(bundleId: String, purchases: [AppReceipt.InAppPurchase]) -> String {
    var attributes = [attribute(type: 2, value: utf8String(bundleId))]
    attributes += purchases.map { attribute(type: 17, value: inAppPurchase($0)) }
    return base64(payload: set(attributes))
  }

  /// The base64 `ContentInfo` of `contentType` (signedData unless said) whose `SignedData`
  /// encapsulates `payload` as content of type `eContentType` (data unless said): for receipts
  /// whose payload or wrapping a test shapes itself.
  public static func base64(
    payload: [UInt8], contentType: ASN1ObjectIdentifier = signedData, eContentType: ASN1ObjectIdentifier = data
  ) -> String {
    let octets = serialized { coder in try coder.serialize(ASN1OctetString(contentBytes: payload[...])) }
    let info = contentInfo(encapsulating: octets, contentType: contentType, eContentType: eContentType)
    return Data(info).base64EncodedString()
  }

  public static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
  public static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]

  /// The DER of a `ContentInfo` of `contentType` whose `SignedData`'s `encapContentInfo` has
  /// `eContentType` and, inside its `[0]`, the node `eContent` as given (BER allowed: a
  /// constructed OCTET STRING, say); nil leaves the content out, as a detached signature does.
  public static func contentInfo(
    encapsulating eContent: [UInt8]?, contentType: ASN1ObjectIdentifier = signedData,
    eContentType: ASN1ObjectIdentifier = data
  ) -> [UInt8] {
    serialized { coder in
      try coder.appendConstructedNode(identifier: .sequence) { coder in
        try coder.serialize(contentType)
        try coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
          try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(1)  // version
            try coder.appendConstructedNode(identifier: .set) { coder in  // digestAlgorithms: SHA-256
              try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize([2, 16, 840, 1, 101, 3, 4, 2, 1] as ASN1ObjectIdentifier)
              }
            }
            try coder.appendConstructedNode(identifier: .sequence) { coder in  // encapContentInfo
              try coder.serialize(eContentType)
              if let eContent {
                coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
                  coder.serializeRawBytes(eContent)
                }
              }
            }
            coder.appendConstructedNode(identifier: .set) { _ in }  // signerInfos: none
          }
        }
      }
    }
  }

  /// The DER of one in-app purchase receipt: a SET of its attributes (types 1701, 1702, 1703,
  /// 1705; those that are nil left out).
  public static func inAppPurchase(_ purchase: AppReceipt.InAppPurchase) -> [UInt8] {
    var attributes: [[UInt8]] = []
    if let quantity = purchase.quantity { attributes.append(attribute(type: 1701, value: integer(quantity))) }
    if let productId = purchase.productId { attributes.append(attribute(type: 1702, value: utf8String(productId))) }
    attributes.append(attribute(type: 1703, value: utf8String(purchase.transactionId)))
    if let original = purchase.originalTransactionId {
      attributes.append(attribute(type: 1705, value: utf8String(original)))
    }
    return set(attributes)
  }

  /// The DER of `SEQUENCE { type INTEGER, version INTEGER (1), value OCTET STRING }`.
  public static func attribute(type: Int, value: [UInt8]) -> [UInt8] {
    serialized { coder in
      try coder.appendConstructedNode(identifier: .sequence) { coder in
        try coder.serialize(type)
        try coder.serialize(1)
        try coder.serialize(ASN1OctetString(contentBytes: value[...]))
      }
    }
  }

  /// The DER of a SET holding `members` (each already DER) in the order given.
  public static func set(_ members: [[UInt8]]) -> [UInt8] {
    serialized { coder in
      coder.appendConstructedNode(identifier: .set) { coder in
        for member in members { coder.serializeRawBytes(member) }
      }
    }
  }

  /// The DER of a UTF8String.
  public static func utf8String(_ text: String) -> [UInt8] {
    serialized { coder in try coder.serialize(ASN1UTF8String(text)) }
  }

  /// The DER of an INTEGER.
  public static func integer(_ value: Int) -> [UInt8] {
    serialized { coder in try coder.serialize(value) }
  }

  static func serialized(_ write: (inout DER.Serializer) throws -> Void) -> [UInt8] {
    var coder = DER.Serializer()
    do {
      try write(&coder)
    } catch {
      preconditionFailure("DER serialization of a test receipt failed: \(error)")
    }
    return coder.serializedBytes
  }
}
