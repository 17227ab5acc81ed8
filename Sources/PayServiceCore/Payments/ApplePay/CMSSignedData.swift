import SwiftASN1
import X509

/// The parts of a detached CMS `SignedData` (RFC 5652) that an Apple Pay token's `signature` carries:
/// its certificates and its one signer. Read with swift-asn1's BER parser, because Apple encodes the
/// outer structures with indefinite lengths.
///
/// This reader is deliberately small and strict: one signer identified by issuer and serial number,
/// SHA-256 digest (with or without explicit NULL parameters, which swift-certificates' own CMS
/// verifier rejects and real tokens use), ECDSA with SHA-256, and the signed attributes
/// content-type, message-digest and signing-time.
struct CMSSignedData {
  /// The certificates the structure carries, in order.
  var certificates: [Certificate]
  /// The signer's certificate issuer and serial number (its `sid`).
  var signerIssuer: DistinguishedName
  var signerSerialNumber: Certificate.SerialNumber
  /// The DER of the signed attributes as they are signed: re-tagged as a SET (RFC 5652 §5.4).
  var signedAttributesDER: [UInt8]
  /// The signed `message-digest` attribute: SHA-256 of the detached content.
  var messageDigest: [UInt8]
  /// The signed `signing-time` attribute, in seconds since the epoch.
  var signingTime: Int64
  /// The signer's DER-encoded ECDSA signature over `signedAttributesDER`.
  var signature: [UInt8]

  /// Why a structure was not read; the message says which part is wrong.
  struct ReadError: Error {
    var message: String
    init(_ message: String) { self.message = message }
  }

  static let signedDataOID: ASN1ObjectIdentifier = "1.2.840.113549.1.7.2"
  static let dataOID: ASN1ObjectIdentifier = "1.2.840.113549.1.7.1"
  static let sha256OID: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.1"
  static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = "1.2.840.10045.4.3.2"
  static let contentTypeAttribute: ASN1ObjectIdentifier = "1.2.840.113549.1.9.3"
  static let messageDigestAttribute: ASN1ObjectIdentifier = "1.2.840.113549.1.9.4"
  static let signingTimeAttribute: ASN1ObjectIdentifier = "1.2.840.113549.1.9.5"

  static func context(_ number: UInt) -> ASN1Identifier {
    ASN1Identifier(tagWithNumber: number, tagClass: .contextSpecific)
  }

  init(berEncoded bytes: [UInt8]) throws(ReadError) {
    do {
      try self.init(root: try BER.parse(bytes))
    } catch let error as ReadError {
      throw error
    } catch {
      throw ReadError("it is not BER-encoded ASN.1")
    }
  }

  private init(root: ASN1Node) throws {
    // ContentInfo ::= SEQUENCE { contentType, [0] EXPLICIT SignedData }
    var contentInfo = try Self.children(root, .sequence, "ContentInfo")
    guard let contentType = contentInfo.next(), try ASN1ObjectIdentifier(berEncoded: contentType) == Self.signedDataOID
    else { throw ReadError("its content type is not signedData") }
    guard let explicit = contentInfo.next() else { throw ReadError("it has no content") }
    var wrapper = try Self.children(explicit, Self.context(0), "the content")
    guard let signedDataNode = wrapper.next() else { throw ReadError("it has no SignedData") }
    var signedData = try Self.children(signedDataNode, .sequence, "SignedData")

    // version, digestAlgorithms, encapContentInfo (detached: no eContent).
    _ = try signedData.next().map { try Int(berEncoded: $0) }
    _ = signedData.next()
    guard let encapsulated = signedData.next() else { throw ReadError("it has no encapsulated content info") }
    var encapsulatedParts = try Self.children(encapsulated, .sequence, "EncapsulatedContentInfo")
    guard let encapsulatedType = encapsulatedParts.next(),
      try ASN1ObjectIdentifier(berEncoded: encapsulatedType) == Self.dataOID
    else { throw ReadError("its encapsulated content type is not data") }
    if encapsulatedParts.next() != nil { throw ReadError("it is not detached (it carries its content)") }

    // [0] IMPLICIT certificates, [1] IMPLICIT crls (ignored), then signerInfos.
    var next = signedData.next()
    var certificates: [Certificate] = []
    if let node = next, node.identifier == Self.context(0) {
      var certificateNodes = try Self.children(node, Self.context(0), "the certificates")
      while let certificateNode = certificateNodes.next() {
        do {
          certificates.append(try Certificate(derEncoded: Array(certificateNode.encodedBytes)))
        } catch {
          throw ReadError("certificate \(certificates.count + 1) is not a valid X.509 certificate")
        }
      }
      next = signedData.next()
    }
    if let node = next, node.identifier == Self.context(1) { next = signedData.next() }
    guard let signerInfosNode = next else { throw ReadError("it has no signer infos") }
    var signerInfos = try Self.children(signerInfosNode, .set, "SignerInfos")
    guard let signerInfoNode = signerInfos.next() else { throw ReadError("it has no signer") }
    if signerInfos.next() != nil { throw ReadError("it has more than one signer") }
    self.certificates = certificates

    // SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, ... }
    var signer = try Self.children(signerInfoNode, .sequence, "SignerInfo")
    _ = signer.next()
    guard let sid = signer.next(), sid.identifier == .sequence else {
      throw ReadError("its signer is not identified by issuer and serial number")
    }
    var sidParts = try Self.children(sid, .sequence, "IssuerAndSerialNumber")
    guard let issuerNode = sidParts.next(), let serialNode = sidParts.next() else {
      throw ReadError("its signer identifier is incomplete")
    }
    signerIssuer = try DistinguishedName(derEncoded: Array(issuerNode.encodedBytes))
    // Read as swift-certificates reads a certificate's serial number, so the two compare equal.
    signerSerialNumber = Certificate.SerialNumber(bytes: try ArraySlice<UInt8>(berEncoded: serialNode))

    guard let digestAlgorithm = signer.next(), try Self.algorithm(digestAlgorithm) == Self.sha256OID else {
      throw ReadError("its digest algorithm is not SHA-256")
    }
    guard let attributesNode = signer.next(), attributesNode.identifier == Self.context(0) else {
      throw ReadError("it has no signed attributes")
    }
    // Signed attributes must be DER (RFC 5652 §5.3): definite lengths, so the encoded bytes are
    // the signed bytes with the implicit [0] tag replaced by SET.
    var attributesDER = Array(attributesNode.encodedBytes)
    guard attributesDER.count > 2, attributesDER[0] == 0xA0, attributesDER[1] != 0x80 else {
      throw ReadError("its signed attributes are not DER-encoded")
    }
    attributesDER[0] = 0x31
    signedAttributesDER = attributesDER

    var messageDigest: [UInt8]?
    var signingTime: Int64?
    var sawContentType = false
    var attributes = try Self.children(attributesNode, Self.context(0), "the signed attributes")
    while let attribute = attributes.next() {
      var parts = try Self.children(attribute, .sequence, "a signed attribute")
      guard let typeNode = parts.next(), let valuesNode = parts.next() else {
        throw ReadError("a signed attribute is incomplete")
      }
      let type = try ASN1ObjectIdentifier(berEncoded: typeNode)
      var values = try Self.children(valuesNode, .set, "a signed attribute's values")
      guard let value = values.next(), values.next() == nil else {
        throw ReadError("signed attribute \(type) does not have exactly one value")
      }
      switch type {
      case Self.contentTypeAttribute:
        guard try ASN1ObjectIdentifier(berEncoded: value) == Self.dataOID else {
          throw ReadError("its signed content type is not data")
        }
        sawContentType = true
      case Self.messageDigestAttribute:
        messageDigest = Array(try ASN1OctetString(berEncoded: value).bytes)
      case Self.signingTimeAttribute:
        signingTime = try Self.seconds(value)
      default:
        break
      }
    }
    guard sawContentType else { throw ReadError("it has no signed content-type attribute") }
    guard let messageDigest else { throw ReadError("it has no signed message-digest attribute") }
    guard let signingTime else { throw ReadError("it has no signed signing-time attribute") }
    self.messageDigest = messageDigest
    self.signingTime = signingTime

    guard let signatureAlgorithm = signer.next(), try Self.algorithm(signatureAlgorithm) == Self.ecdsaWithSHA256OID
    else { throw ReadError("its signature algorithm is not ECDSA with SHA-256") }
    guard let signatureNode = signer.next() else { throw ReadError("it has no signature value") }
    signature = Array(try ASN1OctetString(berEncoded: signatureNode).bytes)
  }

  /// The children of a constructed node with the expected tag.
  private static func children(
    _ node: ASN1Node, _ identifier: ASN1Identifier, _ what: String
  ) throws -> ASN1NodeCollection.Iterator {
    guard node.identifier == identifier, case .constructed(let children) = node.content else {
      throw ReadError("\(what) is not the expected ASN.1 structure")
    }
    return children.makeIterator()
  }

  /// An AlgorithmIdentifier's OID; parameters, when present, must be NULL.
  private static func algorithm(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
    var parts = try children(node, .sequence, "an algorithm identifier")
    guard let oid = parts.next() else { throw ReadError("an algorithm identifier is empty") }
    if let parameters = parts.next() {
      guard parameters.identifier == .null, parts.next() == nil else {
        throw ReadError("an algorithm identifier has unexpected parameters")
      }
    }
    return try ASN1ObjectIdentifier(berEncoded: oid)
  }

  /// A `Time` (UTCTime or GeneralizedTime) in seconds since the epoch.
  private static func seconds(_ node: ASN1Node) throws -> Int64 {
    let year, month, day, hours, minutes, seconds: Int
    switch node.identifier {
    case .utcTime:
      let time = try UTCTime(berEncoded: node)
      (year, month, day, hours, minutes, seconds) = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
    case .generalizedTime:
      let time = try GeneralizedTime(berEncoded: node)
      (year, month, day, hours, minutes, seconds) = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
    default:
      throw ReadError("its signing time is not a UTCTime or GeneralizedTime")
    }
    return Int64(RFC3339.daysFromCivil(year, month, day)) * 86_400 + Int64(hours * 3600 + minutes * 60 + seconds)
  }
}
