import Foundation
import Yams

extension ConfigDecoder {
  /// `applePay:`: the merchant's Payment Processing Certificate and key, read from files named
  /// relative to the config file, and checked against `merchant.identifier` and each other.
  func decodeApplePay(_ node: Node, merchant: Merchant) -> ApplePayMerchant? {
    let path = "applePay"
    let keys = ["merchantCertificate", "merchantPrivateKey", "rootCertificate", "maxTokenAgeSeconds"]
    guard let fields = reader.mapping(node, path, allowed: keys) else { return nil }
    let directory = (reader.file as NSString).deletingLastPathComponent

    /// The text of the file a key names, or nil (reported).
    func file(_ key: String, required: Bool) -> (node: Node, text: String)?? {
      guard let valueNode = required ? reader.require(fields, key, in: node, path) : fields[key] else {
        return required ? nil : .some(nil)
      }
      guard let name = reader.string(valueNode, "\(path).\(key)") else { return nil }
      let resolved = name.hasPrefix("/") || directory.isEmpty ? name : "\(directory)/\(name)"
      guard let data = FileManager.default.contents(atPath: resolved), let text = String(data: data, encoding: .utf8)
      else {
        reader.report(valueNode, "\(path).\(key)", "cannot read \(resolved) (paths are relative to the config file)")
        return nil
      }
      return .some((valueNode, text))
    }
    let certificate = file("merchantCertificate", required: true)
    let privateKey = file("merchantPrivateKey", required: true)
    let root = file("rootCertificate", required: false)
    var maxAge: Int? = 300
    if let n = fields["maxTokenAgeSeconds"] {
      maxAge = reader.int(n, "\(path).maxTokenAgeSeconds", range: 1...86_400)
    }
    guard let certificate = certificate ?? nil, let privateKey = privateKey ?? nil, let root, let maxAge else {
      return nil
    }
    do {
      return try ApplePayMerchant.load(
        certificatePEM: certificate.text, privateKeyPEM: privateKey.text, rootPEM: root?.text,
        merchantIdentifier: merchant.identifier, maxTokenAgeSeconds: maxAge)
    } catch {
      let place = [
        "merchantCertificate": certificate.node, "merchantPrivateKey": privateKey.node, "rootCertificate": root?.node,
      ][error.key] ?? node
      reader.report(place, "\(path).\(error.key)", error.message)
      return nil
    }
  }
}
