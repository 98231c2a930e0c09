// Package platform holds what every service of the defect showcase shares and
// nothing that knows about a defect: JSON writers (respond), the route table
// that turns a service's routes into a router with exact 404/405/OPTIONS rules
// (routes), request logging, metrics and request IDs (observe), request
// parsing the way the original demo read its input (reqparse), and serving
// with an admin listener and graceful shutdown (server).
package platform
