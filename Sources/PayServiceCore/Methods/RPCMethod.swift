/// One JSON-RPC method, described once: its name and documentation, the shape of its params (which
/// reads them and gives their schema), its result type (which writes itself and gives its schema),
/// and what it does. `MethodRegistry` lists the methods; nothing else restates them.
public protocol RPCMethod: SendableMetatype {
  associatedtype Params: Sendable
  associatedtype Result: MethodResult & WireValue

  static var name: String { get }
  static var documentation: MethodDocumentation { get }
  static var params: ObjectShape<Params> { get }
  /// Whether a notification (a request without `id`) runs at all. Payments need an answer, so
  /// `authorizePayment` and `processOrder` do not run as notifications.
  static var runsAsNotification: Bool { get }
  /// Whether the method may read or write the store. A method declared store-free (false) is
  /// answered from config and the clock alone, so the server may run it in parallel with others;
  /// undeclared, a method is taken to use the store and runs in order on the store's thread.
  static var usesStore: Bool { get }
  static func run(_ params: Params, context: ServiceContext) throws -> Result
  /// The kinds of operation the method records in the journal (`Operation`), so that the sweep at
  /// start-up sends again what a previous process left pending: none by default, and an
  /// `OperationMethod`'s own.
  static var operationKinds: [any Operation.Type] { get }
  /// Reads the params, runs the method and writes its result (the default does exactly that). A
  /// requirement so that the registry, which holds methods as `any RPCMethod.Type`, reaches code
  /// specialized for each method rather than generic code that looks its types up on every call.
  static func call(_ params: JSONValue?, context: ServiceContext, into writer: inout JSONWriter) throws
    -> ResultFailure?
  /// The method as an entry of the method table: one default for every method, another for an
  /// `OperationMethod`. A requirement, so that what a method is comes from its declaration (a
  /// cast to a protocol would look the conformance up at start-up, scanning every conformance in
  /// the binary once per method).
  static var tableEntry: MethodTable.Entry { get }
}

extension RPCMethod {
  public static func call(_ params: JSONValue?, context: ServiceContext, into writer: inout JSONWriter) throws
    -> ResultFailure?
  {
    let result = try run(readParams(params, context: context), context: context)
    result.write(to: &writer)
    return result.failure
  }

  /// The params read with the method's shape, or -32602 listing every problem.
  static func readParams(_ params: JSONValue?, context: ServiceContext) throws -> Params {
    let reader = ParamReader(context: context)
    guard let object = reader.params(params), let params = Self.params.read(object, at: { "" }, reader: reader) else {
      throw ServiceError.invalidParams(reader.errors)
    }
    return params
  }

  public static var runsAsNotification: Bool { true }
  public static var usesStore: Bool { true }
  public static var operationKinds: [any Operation.Type] { [] }
  public static var tableEntry: MethodTable.Entry { tableEntry(operation: nil) }

  /// The entry, with the executor's way in for a method that is one operation.
  static func tableEntry(
    commitsInGroups: Bool = false, operation: (@Sendable (JSONValue?, ServiceContext) throws -> OperationRequest)?
  ) -> MethodTable.Entry {
    let usesStore = usesStore
    return MethodTable.Entry(
      answerRequired: runsAsNotification ? nil : "a payment", usesStore: { _ in usesStore },
      commitsInGroups: commitsInGroups, operation: operation
    ) { params, context, _, writer in try call(params, context: context, into: &writer) }
  }

  /// Everything `rpc.discover` and MCP's `tools/list` say about the method.
  public static var description: MethodDescription {
    MethodDescription(
      documentation: documentation, params: params.members, result: Result.schema)
  }
}

/// What every method works with: config, pricing, the store and the clock.
public final class ServiceContext: Sendable {
  public let config: Config
  public let pricer: Pricer
  public let validator: ContactValidator
  public let storeSource: StoreSource
  public let clock: ServiceClock
  /// The remote gateway's calls (`gateway.kind: stripe`); nil for the sandbox, which charges inside
  /// the store transaction.
  public let gatewayCalls: GatewayCalls?
  /// Merchant session requests to Apple (`applePay.merchantIdentityCertificate`); nil when the
  /// config has no merchant identity.
  public let merchantSessions: MerchantSessionCalls?
  /// The App Store Server API (`appStore.api`); nil when the config has no key for it.
  public let appStoreServer: AppStoreServerCalls?
  /// Pushes to APNs about Wallet orders (`walletOrders.apns`); nil when the config has none.
  public let walletPushes: WalletPushCalls?
  /// Apple's Merchant Token Management API (`applePay.merchantTokens`); nil when the config has none.
  public let merchantTokens: MerchantTokenCalls?
  /// The calls work recorded for after it is durable (`RecordedOperation`), kept across reloads.
  public let recordedCalls: RecordedCalls
  /// What devices reported through `logWalletMessages`, for the operator's log.
  public let walletDeviceMessages = WalletDeviceMessages()
  /// What loads the config again (`reloadConfig`, SIGHUP); nil for a process that does not reload.
  public let reloader: ConfigReloader?
  /// Whether this process serves the back office (`--back-office`): the merchant's staff, who may
  /// name accounts by any purchase and move purchases between accounts. Otherwise the caller is
  /// taken to be a shopper, or anyone.
  public let backOffice: Bool
  /// The config compiled for the borrowed request path; nil when it prices nothing this way.
  let pricingTable: PricingTable?
  private let pricingTableStorage: PricingTable.Storage?

  /// The store; a deferred one is waited for on first use (see `StoreSource`).
  public var store: any Store {
    get throws(StoreError) { try storeSource.get() }
  }

  /// The store's identifiers (`Identifiers`): its key is the store's.
  public var identifiers: Identifiers {
    get throws(StoreError) { try storeSource.get().identifiers }
  }

  public init(
    config: Config, storeSource: StoreSource, clock: ServiceClock, gateway: GatewayCalls? = nil,
    merchantSessions: MerchantSessionCalls? = nil, appStoreServer: AppStoreServerCalls? = nil,
    walletPushes: WalletPushCalls? = nil, merchantTokens: MerchantTokenCalls? = nil,
    recordedCalls: RecordedCalls = RecordedCalls(), reloader: ConfigReloader? = nil, backOffice: Bool = false
  ) {
    self.config = config
    self.walletPushes = walletPushes
    self.merchantTokens = merchantTokens
    self.recordedCalls = recordedCalls
    self.reloader = reloader
    self.backOffice = backOffice
    self.gatewayCalls = gateway
    self.merchantSessions = merchantSessions
    self.appStoreServer = appStoreServer
    self.pricer = Pricer(config: config)
    self.validator = ContactValidator(shipsTo: config.shipping.shipsTo)
    self.storeSource = storeSource
    self.clock = clock
    let compiled = PricingTable.make(pricer)
    self.pricingTable = compiled?.0
    self.pricingTableStorage = compiled?.1
  }

  public convenience init(
    config: Config, store: any Store, clock: ServiceClock, gateway: GatewayCalls? = nil,
    merchantSessions: MerchantSessionCalls? = nil, appStoreServer: AppStoreServerCalls? = nil,
    walletPushes: WalletPushCalls? = nil, merchantTokens: MerchantTokenCalls? = nil, reloader: ConfigReloader? = nil,
    backOffice: Bool = false
  ) {
    self.init(
      config: config, storeSource: StoreSource(store), clock: clock, gateway: gateway, merchantSessions: merchantSessions,
      appStoreServer: appStoreServer, walletPushes: walletPushes, merchantTokens: merchantTokens, reloader: reloader,
      backOffice: backOffice)
  }
}

/// The explicit lists of methods payservice serves: adding a method is one file and one line here.
public enum MethodRegistry {
  /// What a shopper-facing client (a checkout, a plugin, an agent) may call.
  public static let methods: [any RPCMethod.Type] = [
    CreatePaymentRequest.self,
    StartMerchantSession.self,
    ComputeSummaryItems.self,
    SelectShippingContact.self,
    SelectShippingMethod.self,
    SelectPaymentMethod.self,
    ChangeCouponCode.self,
    AuthorizePayment.self,
    ProcessOrder.self,
    ListProducts.self,
    ListShippingMethods.self,
    Health.self,
    ProcessStripeEvent.self,
    ProcessAdyenNotification.self,
    ProcessMerchantTokenNotification.self,
    VerifyAppStoreTransaction.self,
    ProcessAppStoreNotification.self,
    GetEntitlements.self,
    ConsumeUnits.self,
    GetWalletOrder.self,
    RegisterWalletDevice.self,
    UnregisterWalletDevice.self,
    ListChangedWalletOrders.self,
    LogWalletMessages.self,
  ]

  /// The back office after the sale: served only when the process starts with `--back-office`, so
  /// that no shopper-facing client can move money back. Otherwise they are unknown methods (-32601)
  /// and no document or tool list shows them.
  /// `getOrder` is here too: an order holds the buyer's contacts, and its id is no credential.
  public static let backOfficeMethods: [any RPCMethod.Type] = [
    GetOrder.self,
    CaptureOrder.self,
    CancelOrder.self,
    RefundOrder.self,
    ListOrders.self,
    AdjustStock.self,
    ListStock.self,
    ErasePersonalData.self,
    ReloadConfig.self,
    ReconcileStripe.self,
    ResolvePending.self,
    PayoutReport.self,
    RunBilling.self,
    ReloadBalance.self,
    GetAgreement.self,
    ListAgreements.self,
    CancelAgreement.self,
    SyncAppStoreHistory.self,
    RecoverAppStoreNotifications.self,
    ListAppStoreNotifications.self,
    ShipOrder.self,
  ]

  /// Methods whose common requests are also answered from the request's bytes without a parse
  /// tree (`BorrowedMethod`); each must be in `methods`.
  static let borrowedMethods: [any BorrowedMethod.Type] = [
    ComputeSummaryItems.self
  ]

  /// The methods a process serves.
  public static func methods(backOffice: Bool) -> [any RPCMethod.Type] {
    backOffice ? methods + backOfficeMethods : methods
  }

  public static var names: [String] { methods.map { $0.name } }

  /// The methods as entries of a method table.
  static func register(_ methods: [any RPCMethod.Type], into table: inout MethodTable) {
    for method in methods { table.register(method.name, method.tableEntry) }
    for method in borrowedMethods where table[method.name] != nil { table.registerBorrowed(method) }
  }

}
