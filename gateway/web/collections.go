package web

import (
	"bytes"
	"fmt"
	"html"
	"strconv"
	"strings"

	postman "github.com/rbretecher/go-postman-collection"

	"github.com/defectshowcase/showcase/catalogue"
)

// CollectionsPrefix is where the collections of trigger requests are
// served: every trigger of the catalogue as a Postman collection (v2.1) and
// as a .http file, each in two variants, the answers with the defects
// active and with them switched off.
const CollectionsPrefix = "/collections/"

// defaultBase is the base URL the collections start with; each names it
// once (the Postman variable baseUrl, the .http variable @baseUrl).
const defaultBase = "http://localhost:8080"

// collectionFile is one file of the collections: its name, what it is,
// and the variant whose answers it expects.
type collectionFile struct {
	name    string
	postman bool // a Postman collection; else a .http file
	on      bool // the answers with the defects active
}

// collectionFiles are the four files: each format in both variants.
var collectionFiles = func() []collectionFile {
	var files []collectionFile
	for _, v := range []struct {
		name string
		on   bool
	}{{"defects-on", true}, {"defects-off", false}} {
		files = append(files,
			collectionFile{name: "showcase-" + v.name + ".postman_collection.json", postman: true, on: v.on},
			collectionFile{name: "showcase-" + v.name + ".http", on: v.on})
	}
	return files
}()

// Collections lists the collection files the site serves, by name.
func Collections() []string {
	names := make([]string, len(collectionFiles))
	for i, f := range collectionFiles {
		names[i] = f.name
	}
	return names
}

// render is the file's content and its content type.
func (f collectionFile) render() ([]byte, string, error) {
	if !f.postman {
		return httpFile(f.on), f.contentType(), nil
	}
	b, err := postmanCollection(f.on)
	return b, f.contentType(), err
}

// contentType is the file's content type.
func (f collectionFile) contentType() string {
	if f.postman {
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// link is the front page's link to the file, relative to the page.
func (f collectionFile) link() string {
	kind := ".http file"
	if f.postman {
		kind = "Postman collection"
	}
	return `<a href="` + html.EscapeString(strings.TrimPrefix(CollectionsPrefix, "/")+f.name) + `" download>` + kind + ", " + variantTitle(f.on) + `</a>`
}

// expectation is what a trigger gets in a variant: its status, and what to
// look at in the answer (which starts with the status).
func expectation(t catalogue.Trigger, on bool) (int, string) {
	if on {
		return t.Status, t.Shows
	}
	return t.OffStatus, t.OffShows
}

// variantTitle names a variant for people.
func variantTitle(on bool) string {
	if on {
		return "defects on (DEFECTS=all)"
	}
	return "defects off (DEFECTS=none)"
}

// triggerName names one trigger request: its defect, and its number when
// the defect has several.
func triggerName(d catalogue.Defect, i int) string {
	name := string(d.ID) + " " + d.Title
	if len(d.Triggers) > 1 {
		name += " (" + strconv.Itoa(i+1) + ")"
	}
	return name
}

// postmanCollection is every trigger as a Postman collection: a folder per
// category, each request described by the answer it gets and checked by a
// test script that Postman and Newman run.
func postmanCollection(on bool) ([]byte, error) {
	c := postman.CreateCollection("Defect showcase API: triggers, "+variantTitle(on),
		"Every request that shows a planted defect, from the showcase's catalogue, with the answer it gets when the instance runs with "+
			variantTitle(on)+". Set the collection variable baseUrl to the instance.")
	c.Variables = []*postman.Variable{{Key: "baseUrl", Value: defaultBase, Type: "string"}}
	for _, cat := range catalogue.Categories {
		folder := c.AddItemGroup(cat.Title)
		for _, ep := range catalogue.EndpointsOf(cat.Name) {
			d := catalogue.DefectOf(ep.Defect)
			for i, t := range d.Triggers {
				status, shows := expectation(t, on)
				req := &postman.Request{
					URL:         &postman.URL{Raw: "{{baseUrl}}" + d.Target(t)},
					Method:      postman.Method(ep.Method),
					Description: "Expect " + shows + ". " + d.Symptom,
				}
				if t.Body != "" {
					req.Header = []*postman.Header{{Key: "Content-Type", Value: "application/json"}}
					req.Body = &postman.Body{Mode: "raw", Raw: t.Body, Options: &postman.BodyOptions{Raw: postman.BodyOptionsRaw{Language: postman.JSON}}}
				}
				folder.AddItem(postman.CreateItem(postman.Item{
					Name:    triggerName(d, i),
					Request: req,
					Events: []*postman.Event{postman.CreateEvent(postman.Test, []string{
						fmt.Sprintf("pm.test(%s, function () { pm.response.to.have.status(%d); });", strconv.Quote(fmt.Sprintf("%s: %d", d.ID, status)), status),
					})},
				}))
			}
		}
	}
	var b bytes.Buffer
	if err := c.Write(&b, postman.V210); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// httpFile is every trigger as a .http file, the format of the REST clients
// of JetBrains IDEs and VS Code: a request per block, its expected answer
// in the comment line that opens it.
func httpFile(on bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Defect showcase API: every request that shows a planted defect, with the answer it gets\n# when the instance runs with %s. Generated from the showcase's catalogue.\n\n@baseUrl = %s\n", variantTitle(on), defaultBase)
	for _, d := range catalogue.Defects {
		ep := catalogue.EndpointOf(d.ID)
		for i, t := range d.Triggers {
			_, shows := expectation(t, on)
			fmt.Fprintf(&b, "\n### %s: expect %s\n%s {{baseUrl}}%s\n", triggerName(d, i), shows, ep.Method, d.Target(t))
			if t.Body != "" {
				fmt.Fprintf(&b, "Content-Type: application/json\n\n%s\n", t.Body)
			}
		}
	}
	return []byte(b.String())
}
