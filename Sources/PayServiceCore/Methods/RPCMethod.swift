/// One JSON-RPC method: its name, how it reads its params and what it returns.
public protocol RPCMethod {
  associatedtype Params
  associatedtype Output: JSONRepresentable

  static var name: String { get }
  /// Params, result, errors and hints, for `rpc.discover` and MCP's `tools/list`.
  static var documentation: MethodDescription { get }
  /// Whether a notification (a request without `id`) runs at all. Payments need an answer, so
  /// `authorizePayment` and `processOrder` do not run as notifications.
  static var runsAsNotification: Bool { get }
  /// Whether the method reads or writes the store. Methods that do not are answered from config
  /// and the clock alone, so the server may run them in parallel with others.
  static var usesStore: Bool { get }
  /// Whether pipelined requests of this method may share one store transaction (group commit):
  /// each runs in its own savepoint and is answered only after the shared commit.
  static var commitsInGroups: Bool { get }
  /// Reads the params object, reporting each problem to `reader`; nil when any was found.
  static func readParams(_ params: JSONObject, reader: ParamReader, context: ServiceContext) -> Params?
  static func run(_ params: Params, context: ServiceContext) throws -> Output
}

extension RPCMethod {
  public static var runsAsNotification: Bool { true }
  public static var usesStore: Bool { false }
  public static var commitsInGroups: Bool { false }
}

/// What every method works with: config, pricing, the store and the clock.
public final class ServiceContext: Sendable {
  public let config: Config
  public let pricer: Pricer
  public let validator: ContactValidator
  public let storeSource: StoreSource
  public let clock: ServiceClock

  /// The store; a deferred one is waited for on first use (see `StoreSource`).
  public var store: any Store {
    get throws(StoreError) { try storeSource.get() }
  }

  public init(config: Config, storeSource: StoreSource, clock: ServiceClock) {
    self.config = config
    self.pricer = Pricer(config: config)
    self.validator = ContactValidator(shipsTo: config.shipping.shipsTo)
    self.storeSource = storeSource
    self.clock = clock
  }

  public convenience init(config: Config, store: any Store, clock: ServiceClock) {
    self.init(config: config, storeSource: StoreSource(store), clock: clock)
  }

  /// Reads an optional `shippingMethod` identifier, which must name a configured method.
  func readShippingMethod(_ value: JSONValue?, _ path: String, reader: ParamReader, required: Bool) -> String?? {
    if value == nil && !required { return .some(nil) }
    guard let identifier = reader.string(value, path) else { return nil }
    guard config.shippingMethodsByIdentifier[identifier] != nil else {
      let known = config.shipping.methods.map(\.identifier).joined(separator: ", ")
      reader.fail(path, "unknown shipping method \"\(identifier)\"; configured: \(known)")
      return nil
    }
    return .some(identifier)
  }
}

/// The explicit list of methods payservice serves.
public struct MethodRegistry: Sendable {
  nonisolated(unsafe) public static let methods: [any RPCMethod.Type] = [
    ComputeSummaryItems.self,
    SelectShippingContact.self,
    SelectShippingMethod.self,
    SelectPaymentMethod.self,
    ChangeCouponCode.self,
    AuthorizePayment.self,
    ProcessOrder.self,
    ListProducts.self,
    ListShippingMethods.self,
    GetOrder.self,
  ]

  struct Entry: @unchecked Sendable {
    let runsAsNotification: Bool
    /// Whether a request with these params reads or writes the store (then it is answered in order
    /// on the main thread, see `RequestHandler.handleIfStoreFree`).
    let usesStore: (JSONValue?) -> Bool
    let commitsInGroups: Bool
    /// Reads the params, runs the method and writes its result; throws before writing anything.
    let handle: (JSONValue?, ServiceContext, inout JSONWriter) throws -> Void

    /// A method of a protocol around payservice's own (`rpc.discover`, MCP): runs as a notification
    /// too, and is answered from config alone unless `usesStore` says otherwise.
    static func protocolMethod(
      runsAsNotification: Bool = true, usesStore: @escaping (JSONValue?) -> Bool = { _ in false },
      _ handle: @escaping (JSONValue?, ServiceContext, inout JSONWriter) throws -> Void
    ) -> Entry {
      Entry(runsAsNotification: runsAsNotification, usesStore: usesStore, commitsInGroups: false, handle: handle)
    }
  }

  let entries: [String: Entry]

  public init() {
    var entries: [String: Entry] = [:]
    for method in MethodRegistry.methods {
      entries[method.name] = MethodRegistry.entry(for: method)
    }
    self.entries = entries
  }

  public var names: [String] { MethodRegistry.methods.map { $0.name } }

  static func entry<M: RPCMethod>(for method: M.Type) -> Entry {
    Entry(
      runsAsNotification: M.runsAsNotification, usesStore: { _ in M.usesStore }, commitsInGroups: M.commitsInGroups
    ) { value, context, writer in
      let reader = ParamReader()
      guard let object = reader.params(value),
        let params = M.readParams(object, reader: reader, context: context), reader.errors.isEmpty
      else {
        throw ServiceError.invalidParams(reader.errors)
      }
      try M.run(params, context: context).write(to: &writer)
    }
  }
}
