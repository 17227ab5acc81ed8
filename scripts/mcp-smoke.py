#!/usr/bin/env python3
"""payservice against a real MCP client: the official Python SDK (pip package `mcp`) starts the
binary over stdio, lists its tools and calls computeSummaryItems, once with each way the SDK
connects: "auto" (it probes server/discover and speaks the 2026-07-28 revision, every request
carrying its envelope) and "legacy" (the initialize handshake, revision 2025-11-25).

    swift build -c release --product payservice
    python3 -m venv .build/mcp-venv && .build/mcp-venv/bin/pip install mcp
    .build/mcp-venv/bin/python scripts/mcp-smoke.py [path/to/payservice]

Exits 0 when every check passed, 1 on the first that did not (printed), and 77 ("skipped") when the
`mcp` package is not installed, so CI can skip it on a machine without it.
"""
import asyncio
import json
import os
import sys
import warnings

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

try:
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError
except ImportError:
    print("mcp-smoke: skipped: the Python package `mcp` is not installed (pip install mcp)", file=sys.stderr)
    sys.exit(77)

# The SDK warns that ping left the protocol in 2026-07-28; the legacy session still sends it on purpose.
warnings.filterwarnings("ignore", message="ping is removed")

TOOLS = [
    "createPaymentRequest", "startMerchantSession", "computeSummaryItems", "selectShippingContact", "selectShippingMethod", "selectPaymentMethod",
    "changeCouponCode", "authorizePayment", "processOrder", "listProducts", "listShippingMethods", "health",
    "processStripeEvent", "processAdyenNotification", "processMerchantTokenNotification", "verifyAppStoreTransaction", "processAppStoreNotification", "getEntitlements", "consumeUnits",
    "getWalletOrder", "registerWalletDevice", "unregisterWalletDevice", "listChangedWalletOrders", "logWalletMessages",
]
READ_ONLY = {"createPaymentRequest", "startMerchantSession", "computeSummaryItems", "selectShippingContact", "selectShippingMethod", "selectPaymentMethod",
             "changeCouponCode", "listProducts", "listShippingMethods", "health", "getEntitlements", "getWalletOrder",
             "listChangedWalletOrders"}
# Spending an account's units cannot be undone.
DESTRUCTIVE = {"consumeUnits"}
# One clock shipped free in the US, 8% default tax: the README's first example.
CLOCK = {
    "currencyCode": "USD",
    "shippingMethod": "free",
    "summaryItems": [
        {"label": "Clock", "amount": "50.00", "type": "final"},
        {"label": "Shipping", "amount": "0.00", "type": "final"},
        {"label": "Tax", "amount": "4.00", "type": "final"},
        {"label": "Acme", "amount": "54.00", "type": "final"},
    ],
}


def check(condition, message):
    if not condition:
        print(f"mcp-smoke: FAILED: {message}", file=sys.stderr)
        sys.exit(1)


async def session(binary, mode, revision):
    server = StdioServerParameters(
        command=binary,
        args=["--config", os.path.join(ROOT, "config.yaml"), "--now", "2026-11-21T12:00:00Z", "--quiet"],
    )
    async with Client(server, mode=mode, raise_exceptions=True) as client:
        check(client.server_info is not None and client.server_info.name == "payservice",
              f"serverInfo.name is payservice ({client.server_info})")
        check(client.protocol_version == revision, f"negotiated {revision}, got {client.protocol_version}")
        if mode == "legacy":
            await client.send_ping()  # removed in 2026-07-28

        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        check(names == TOOLS, f"tools/list lists the twenty-four methods in order, got {names}")
        for tool in listed.tools:
            check(tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema is an object schema")
            check((tool.output_schema or {}).get("type") == "object", f"{tool.name}: outputSchema is an object schema")
            check(len(tool.description or "") > 80, f"{tool.name}: has a description")
            hints = tool.annotations
            check(hints is not None and hints.read_only_hint == (tool.name in READ_ONLY),
                  f"{tool.name}: readOnlyHint is {tool.name in READ_ONLY}")
            check(hints.destructive_hint == (tool.name in DESTRUCTIVE),
                  f"{tool.name}: destructiveHint is {tool.name in DESTRUCTIVE}")

        result = await client.call_tool("computeSummaryItems", {"items": [{"sku": "clock"}]})
        check(not result.is_error, f"computeSummaryItems succeeded: {result}")
        check(result.structured_content == CLOCK, f"structuredContent is the priced cart: {result.structured_content}")
        check(json.loads(result.content[0].text) == CLOCK, "the text block holds the same JSON")

        bad = await client.call_tool("computeSummaryItems", {"items": [{"sku": "clock", "quantity": 0}]})
        check(bad.is_error, "invalid arguments give isError")
        check("items[0].quantity" in bad.content[0].text, f"and name the field: {bad.content[0].text}")

        try:
            await client.call_tool("noSuchTool", {})
            check(False, "an unknown tool is a JSON-RPC error")
        except MCPError as error:
            check(error.error.code == -32602, f"an unknown tool is -32602, got {error.error.code}")
    return len(names)


async def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "payservice")
    check(os.access(binary, os.X_OK), f"{binary} is an executable (swift build -c release --product payservice)")
    for mode, revision, start in [("auto", "2026-07-28", "server/discover"), ("legacy", "2025-11-25", "initialize, ping")]:
        count = await session(binary, mode, revision)
        print(f"mcp-smoke: mode {mode} ({revision}): {start}, {count} tools listed, computeSummaryItems called: ok")


asyncio.run(main())
