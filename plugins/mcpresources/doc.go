// Package mcpresources provides the mcpResources service: MCP servers register a resource
// [Provider] per scope, and the service offers the three shared tools list_mcp_resources,
// list_mcp_resource_templates and read_mcp_resource in every scope that has at least one
// provider.
package mcpresources
