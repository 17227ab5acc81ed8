import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import SwiftASN1
import Testing

/// Receipts of original StoreKit: Apple's library's vectors read to their exact contents, receipts
/// built here read back exactly, and hostile input refused with the failure named.
@Suite("App Store receipts")
struct AppReceiptTests {
  typealias Purchase = AppReceipt.InAppPurchase

  static func vector(_ name: String) throws -> String {
    try String(contentsOfFile: TestPaths.path("Tests/PayServiceCoreTests/Fixtures/appstore/\(name)"), encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func failure<T>(_ body: () throws(AppReceiptFailure) -> T) -> String? {
    do {
      _ = try body()
      return nil
    } catch {
      return error.message
    }
  }

  static func failure(reading receipt: String) -> String? {
    failure { () throws(AppReceiptFailure) in try AppReceipt.read(base64: receipt) }
  }

  static func failure(transactionReceipt receipt: String) -> String? {
    failure { () throws(AppReceiptFailure) in try AppReceipt.transactionId(fromTransactionReceipt: receipt) }
  }

  static let xcodeBundle = "com.example.naturelab.backyardbirds.example"
  static let notASN1 = "the receipt is not a PKCS#7 SignedData: its bytes are not ASN.1 (BER), or are cut short"

  /// A payload attribute `SEQUENCE { type, version 1, value }` whose value is any DER node.
  static func attribute(type: Int, rawValue: [UInt8]) -> [UInt8] {
    var coder = DER.Serializer()
    coder.appendConstructedNode(identifier: .sequence) { coder in
      coder.serializeRawBytes(AppReceiptBuilder.integer(type))
      coder.serializeRawBytes(AppReceiptBuilder.integer(1))
      coder.serializeRawBytes(rawValue)
    }
    return coder.serializedBytes
  }

  static func ia5String(_ text: String) throws -> [UInt8] {
    var coder = DER.Serializer()
    try coder.serialize(try ASN1IA5String(text))
    return coder.serializedBytes
  }

  @Test("Xcode's app receipt with a transaction: bundle com.example.naturelab.backyardbirds.example, one purchase, transaction 0 of pass.premium")
  func xcodeReceiptWithTransaction() throws {
    let receipt = try Self.vector("xcode-app-receipt-with-transaction")
    let expected = Purchase(transactionId: "0", originalTransactionId: nil, productId: "pass.premium", quantity: 1)
    #expect(try AppReceipt.read(base64: receipt) == AppReceipt.Contents(bundleId: Self.xcodeBundle, purchases: [expected]))
    #expect(try AppReceipt.inAppPurchases(base64: receipt) == [expected])
    #expect(try AppReceipt.transactionId(fromAppReceipt: receipt) == "0")
    // Wrapped at 76 columns with CRLF, as MIME encoders write base64: the same receipt.
    let wrapped = Data(base64Encoded: receipt).map { $0.base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]) }
    #expect(wrapped?.contains("\r\n") == true)
    #expect(try AppReceipt.inAppPurchases(base64: wrapped ?? "") == [expected])
  }

  @Test("Xcode's app receipt without purchases: its bundle, no purchase, no transaction id")
  func xcodeReceiptEmpty() throws {
    let receipt = try Self.vector("xcode-app-receipt-empty")
    #expect(try AppReceipt.read(base64: receipt) == AppReceipt.Contents(bundleId: Self.xcodeBundle, purchases: []))
    #expect(try AppReceipt.inAppPurchases(base64: receipt) == [])
    #expect(try AppReceipt.transactionId(fromAppReceipt: receipt) == nil)
  }

  @Test("the legacy transaction receipt of Apple's library names transaction 33993399")
  func legacyTransactionReceipt() throws {
    #expect(try AppReceipt.transactionId(fromTransactionReceipt: try Self.vector("legacyTransaction")) == "33993399")
  }

  @Test("transaction receipts of the old format: blanks around =, the first matching entry, and each missing part named")
  func legacyTransactionReceiptShapes() throws {
    func encode(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
    let info = encode("{\n\t\"transaction-id\"\t=\n\"1000000059511766\";\n\"quantity\" = \"1\";\n}")
    #expect(try AppReceipt.transactionId(fromTransactionReceipt: encode("{\n\"signature\" = \"AAAA\";\n\"purchase-info\"  =  \"\(info)\";\n}")) == "1000000059511766")
    // An entry without blanks around = does not match (nor does it in Apple's library); a later one does.
    let two = encode("\"purchase-info\"=\"\(encode("\"transaction-id\" = \"1\";"))\";\n\"purchase-info\" = \"\(encode("\"transaction-id\" = \"2\";"))\";")
    #expect(try AppReceipt.transactionId(fromTransactionReceipt: two) == "2")
    #expect(Self.failure(transactionReceipt: "") == "the transaction receipt is empty")
    #expect(Self.failure(transactionReceipt: "{ not base64 }") == "the transaction receipt is not base64")
    #expect(Self.failure(transactionReceipt: Data([0xFF, 0xFE, 0x00]).base64EncodedString())
      == "the transaction receipt is not UTF-8 text (an app receipt, PKCS#7, is read by AppReceipt.read(base64:))")
    #expect(Self.failure(transactionReceipt: try Self.vector("xcode-app-receipt-with-transaction"))
      == "the transaction receipt is not UTF-8 text (an app receipt, PKCS#7, is read by AppReceipt.read(base64:))")
    #expect(Self.failure(transactionReceipt: encode("{ \"signature\" = \"AAAA\"; }"))
      == #"the transaction receipt has no "purchase-info" = "<base64>"; entry"#)
    #expect(Self.failure(transactionReceipt: encode("\"purchase-info\" = \"AAA\";"))
      == "the transaction receipt's purchase-info is not base64")
    #expect(Self.failure(transactionReceipt: encode("\"purchase-info\" = \"\(Data([0xC3, 0x28]).base64EncodedString())\";"))
      == "the transaction receipt's purchase-info is not UTF-8 text")
    #expect(Self.failure(transactionReceipt: encode("\"purchase-info\" = \"\(encode("\"transaction-id\" = 33993399;"))\";"))
      == #"the transaction receipt's purchase-info has no "transaction-id" = "<id>"; entry"#)
  }

  @Test("a built receipt of three purchases reads back exactly, in order")
  func builtReceiptRoundTrips() throws {
    let purchases = [
      Purchase(transactionId: "2000000123456789", originalTransactionId: "2000000000000001", productId: "com.example.pro.monthly", quantity: 1),
      Purchase(transactionId: "2000000123456790", originalTransactionId: nil, productId: "com.example.coins.100", quantity: Int.max),
      Purchase(transactionId: "1", originalTransactionId: "1", productId: nil, quantity: nil),
    ]
    let receipt = AppReceiptBuilder.receipt(bundleId: "com.example.shop", purchases: purchases)
    #expect(try AppReceipt.read(base64: receipt) == AppReceipt.Contents(bundleId: "com.example.shop", purchases: purchases))
    #expect(try AppReceipt.inAppPurchases(base64: receipt) == purchases)
    #expect(try AppReceipt.transactionId(fromAppReceipt: receipt) == "2000000123456789")
    #expect(try AppReceipt.inAppPurchases(base64: AppReceiptBuilder.receipt(bundleId: "com.example.shop", purchases: [])) == [])
    // Nearly 1 MiB of base64: every purchase is read.
    let many = (0..<8_000).map { Purchase(transactionId: String(2_000_000_000_000_000 + $0), productId: "com.example.coins.100", quantity: 1) }
    let large = AppReceiptBuilder.receipt(bundleId: "com.example.shop", purchases: many)
    #expect(large.utf8.count > 900_000 && large.utf8.count <= AppReceipt.maximumBase64Length)
    #expect(try AppReceipt.inAppPurchases(base64: large) == many)
  }

  @Test("refused with the failure named: empty, not base64, random bytes, oversize, another content type, no SET payload")
  func refusedReceipts() throws {
    #expect(Self.failure(reading: "") == "the receipt is empty")
    #expect(Self.failure(reading: "\r\n") == "the receipt is empty")
    #expect(Self.failure(reading: "MIIT not base64!") == "the receipt is not base64")
    #expect(Self.failure(reading: "MIIT-w_") == "the receipt is not base64")
    var generator = SplitMix64(seed: 0x5EC7_2024)
    let random = (0..<256).map { _ in UInt8.random(in: 0...255, using: &generator) }
    #expect(Self.failure(reading: Data(random).base64EncodedString()) == Self.notASN1)
    let oversize = "the receipt is longer than 1048576 characters of base64 (1 MiB), more than any receipt"
    #expect(Self.failure(reading: String(repeating: "A", count: AppReceipt.maximumBase64Length + 4)) == oversize)
    #expect(Self.failure(transactionReceipt: String(repeating: "A", count: AppReceipt.maximumBase64Length + 1))
      == "the transaction receipt is longer than 1048576 characters of base64 (1 MiB), more than any receipt")
    // At the limit the input is read: 768 KiB of zero bytes, which are not ASN.1.
    #expect(Self.failure(reading: String(repeating: "A", count: AppReceipt.maximumBase64Length)) == Self.notASN1)
    #expect(Self.failure(reading: try Self.vector("legacyTransaction"))
      == "the receipt is not a PKCS#7 SignedData: it is text beginning with \"{\", a transaction receipt of the old format (read by AppReceipt.transactionId(fromTransactionReceipt:))")

    let payload = AppReceiptBuilder.set([AppReceiptBuilder.attribute(type: 2, value: AppReceiptBuilder.utf8String("com.example"))])
    #expect(Self.failure(reading: AppReceiptBuilder.base64(payload: payload, contentType: [1, 2, 840, 113549, 1, 7, 1]))
      == "the receipt is not a PKCS#7 SignedData: its ContentInfo's content type is 1.2.840.113549.1.7.1, not signedData (1.2.840.113549.1.7.2)")
    #expect(Self.failure(reading: AppReceiptBuilder.base64(payload: payload, eContentType: [1, 2, 840, 113549, 1, 9, 16, 1, 4]))
      == "the receipt is not a PKCS#7 SignedData: its encapsulated content is of type 1.2.840.113549.1.9.16.1.4, not data (1.2.840.113549.1.7.1)")
    #expect(Self.failure(reading: Data(AppReceiptBuilder.integer(7)).base64EncodedString())
      == "the receipt is not a PKCS#7 SignedData: it is not a ContentInfo SEQUENCE")
    #expect(Self.failure(reading: AppReceiptBuilder.base64(payload: AppReceiptBuilder.utf8String("a receipt")))
      == "the receipt payload is not a SET of receipt attributes")
    #expect(Self.failure(reading: AppReceiptBuilder.base64(payload: payload + [0x00]))
      == "the receipt payload is not a SET of receipt attributes")
    #expect(Self.failure(reading: AppReceiptBuilder.base64(payload: [])) == "the receipt payload is not a SET of receipt attributes")
    #expect(Self.failure(reading: Data(AppReceiptBuilder.contentInfo(encapsulating: nil)).base64EncodedString())
      == "the receipt has no payload: its SignedData's encapsulated content is absent (detached)")
    #expect(Self.failure(reading: Data(AppReceiptBuilder.contentInfo(encapsulating: AppReceiptBuilder.set([]))).base64EncodedString())
      == "the receipt is not a PKCS#7 SignedData: its encapsulated content is not an [0] EXPLICIT OCTET STRING")
  }

  @Test("a receipt cut short at any byte, or its base64 cut at any character, is refused without a crash")
  func truncatedReceipts() throws {
    let receipt = try Self.vector("xcode-app-receipt-with-transaction")
    let bytes = try #require(Data(base64Encoded: receipt))
    #expect(Self.failure(reading: Data(bytes.prefix(0)).base64EncodedString()) == "the receipt is empty")
    for cut in [1, 2, 13, 54, 300, 431, 435, 437, bytes.count - 2, bytes.count - 1] {
      #expect(Self.failure(reading: Data(bytes.prefix(cut)).base64EncodedString()) == Self.notASN1, "cut at byte \(cut)")
    }
    var failures: Set<String?> = []
    for cut in 1..<bytes.count { failures.insert(Self.failure(reading: Data(bytes.prefix(cut)).base64EncodedString())) }
    #expect(failures == [Self.notASN1])
    for cut in [1, 7, 100, 1001, receipt.count - 2] {
      let text = String(receipt.prefix(cut))
      #expect(Self.failure(reading: text) == (cut % 4 == 0 ? Self.notASN1 : "the receipt is not base64"), "cut at character \(cut)")
    }
  }

  @Test("attributes of the wrong shape are refused with the attribute named")
  func malformedAttributes() throws {
    func read(_ payload: [[UInt8]]) -> String? { Self.failure(reading: AppReceiptBuilder.base64(payload: AppReceiptBuilder.set(payload))) }
    func inApp(_ attributes: [[UInt8]]) -> [UInt8] { AppReceiptBuilder.attribute(type: 17, value: AppReceiptBuilder.set(attributes)) }
    let bundle = AppReceiptBuilder.attribute(type: 2, value: AppReceiptBuilder.utf8String("com.example"))
    let transaction = AppReceiptBuilder.attribute(type: 1703, value: AppReceiptBuilder.utf8String("7"))

    #expect(read([bundle, Self.attribute(type: 17, rawValue: AppReceiptBuilder.utf8String("not octets"))])
      == "attribute 2 of the receipt payload (type 17) has a value that is not an OCTET STRING")
    #expect(read([AppReceiptBuilder.utf8String("loose")]) == "attribute 1 of the receipt payload is not a SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }")
    #expect(read([Self.attribute(type: 2, rawValue: [])]) == "attribute 1 of the receipt payload (type 2) has no value")
    #expect(read([AppReceiptBuilder.set([])]) == "attribute 1 of the receipt payload is not a SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }")
    // A type of nine bytes does not fit 64 bits.
    var hugeType = DER.Serializer()
    hugeType.appendConstructedNode(identifier: .sequence) { coder in
      coder.serializeRawBytes([0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0])
      coder.serializeRawBytes(AppReceiptBuilder.integer(1))
      coder.serializeRawBytes([0x04, 0x00])
    }
    #expect(read([hugeType.serializedBytes]) == "attribute 1 of the receipt payload has a type that is not a 64-bit INTEGER")
    #expect(read([AppReceiptBuilder.attribute(type: 2, value: try Self.ia5String("com.example"))])
      == "the bundle_id (type 2) of the receipt payload is not a UTF8String")

    #expect(read([bundle, inApp([transaction]), AppReceiptBuilder.attribute(type: 17, value: AppReceiptBuilder.utf8String("x"))])
      == "in-app purchase 2 is not a SET of receipt attributes")
    #expect(read([inApp([AppReceiptBuilder.attribute(type: 1702, value: AppReceiptBuilder.utf8String("p"))])])
      == "in-app purchase 1 has no transaction_id (type 1703)")
    #expect(read([inApp([AppReceiptBuilder.attribute(type: 1703, value: try Self.ia5String("7"))])])
      == "the transaction_id (type 1703) of in-app purchase 1 is not a UTF8String")
    #expect(read([inApp([transaction, AppReceiptBuilder.attribute(type: 1705, value: [0x0C, 0x02, 0xC3, 0xFF])])])
      == "the original_transaction_id (type 1705) of in-app purchase 1 is not a UTF8String")
    #expect(read([inApp([transaction, Self.attribute(type: 1702, rawValue: AppReceiptBuilder.integer(3))])])
      == "attribute 2 of in-app purchase 1 (type 1702) has a value that is not an OCTET STRING")
    #expect(read([inApp([transaction, AppReceiptBuilder.attribute(type: 1701, value: AppReceiptBuilder.utf8String("1"))])])
      == "the quantity (type 1701) of in-app purchase 1 is not an INTEGER")

    // A quantity that does not fit Int is read as none; unknown and repeated attributes are skipped.
    let bigQuantity = AppReceiptBuilder.attribute(type: 1701, value: [0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0])
    let unknown = AppReceiptBuilder.attribute(type: 1719, value: [0xDE, 0xAD])
    let second = AppReceiptBuilder.attribute(type: 1703, value: AppReceiptBuilder.utf8String("8"))
    let receipt = AppReceiptBuilder.base64(payload: AppReceiptBuilder.set([unknown, inApp([bigQuantity, unknown, transaction, second])]))
    #expect(try AppReceipt.read(base64: receipt) == AppReceipt.Contents(bundleId: nil, purchases: [Purchase(transactionId: "7")]))
  }

  @Test("deep nesting and random changes to a receipt end in a failure or a reading, never a crash or a hang")
  func hostileStructure() throws {
    // 4,000 nested indefinite-length SEQUENCEs: SwiftASN1 stops at 50 levels.
    let deep = Array(repeating: [UInt8]([0x30, 0x80]), count: 4_000).flatMap { $0 } + Array(repeating: 0, count: 8_000)
    #expect(Self.failure(reading: Data(deep).base64EncodedString()) == Self.notASN1)
    // The payload in 40 nested constructed OCTET STRINGs of indefinite length (BER allows it):
    // flattened, then read. 60 levels pass SwiftASN1's limit.
    let purchase = Purchase(transactionId: "5", productId: "p", quantity: 2)
    let payload = AppReceiptBuilder.set([AppReceiptBuilder.attribute(type: 17, value: AppReceiptBuilder.inAppPurchase(purchase))])
    func nested(_ levels: Int) -> String {
      var node: [UInt8] = [0x04, UInt8(payload.count)] + payload
      for _ in 0..<levels { node = [0x24, 0x80] + node + [0x00, 0x00] }
      return Data(AppReceiptBuilder.contentInfo(encapsulating: node)).base64EncodedString()
    }
    #expect(payload.count < 0x80)
    #expect(try AppReceipt.inAppPurchases(base64: nested(40)) == [purchase])
    #expect(Self.failure(reading: nested(60)) == Self.notASN1)

    let bytes = try #require(Data(base64Encoded: try Self.vector("xcode-app-receipt-with-transaction")))
    var generator = SplitMix64(seed: 17)
    var read = 0
    for _ in 0..<3_000 {
      var mutated = [UInt8](bytes)
      for _ in 0..<Int.random(in: 1...4, using: &generator) {
        mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
      }
      if (try? AppReceipt.read(base64: Data(mutated).base64EncodedString())) != nil { read += 1 }
    }
    // Most changes fall in the certificates and signature, which are not read.
    #expect(read > 1_000)
  }
}
