/// A failed side of an `Outcome`: what it says to people and models (an MCP tool call with it is
/// marked `isError`).
public protocol FailureReporting {
  var report: ResultFailure { get }
}

/// A result that went through or did not, told apart by its `status` member: `"succeeded"` or
/// `"failed"`, each an object of its own shape. Its schema lists both variants. processOrder and the
/// back-office methods answer with one.
public enum Outcome<Succeeded: WireObject & Equatable & Sendable, Failed: WireObject & Equatable & Sendable & FailureReporting>:
  Equatable, Sendable, MethodResult, WireValue
{
  case succeeded(Succeeded)
  case failed(Failed)

  public static var schema: JSONSchema {
    .variants(tag: "status", [("succeeded", Succeeded.shape.members), ("failed", Failed.shape.members)])
  }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Outcome? {
    guard case .object(let object) = value else {
      reader.fail(path(), "must be an object, got \(value.kindName)")
      return nil
    }
    switch object["status"] {
    case .string("succeeded")?: return Succeeded.shape.read(object, at: path, reader: reader).map(Outcome.succeeded)
    case .string("failed")?: return Failed.shape.read(object, at: path, reader: reader).map(Outcome.failed)
    default:
      reader.fail(FieldPath.join(path(), "status"), "must be \"succeeded\" or \"failed\"")
      return nil
    }
  }

  public func write(to writer: inout JSONWriter) {
    switch self {
    case .succeeded(let succeeded): succeeded.write(to: &writer)
    case .failed(let failed): failed.write(to: &writer)
    }
  }

  public var failure: ResultFailure? {
    guard case .failed(let failed) = self else { return nil }
    return failed.report
  }
}
