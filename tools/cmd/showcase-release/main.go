// Command showcase-release releases the repository's Go modules
// (RELEASING.md):
//
//	showcase-release version           the version main's go.mod files name
//	showcase-release set vX.Y.Z        name it in every go.mod (replaces kept)
//	showcase-release check             build every module as released, GOWORK=off
//	showcase-release tag vX.Y.Z        the release commit and its tags, HEAD detached
//	showcase-release proxy DIR [vX.Y.Z] a Go module proxy (GOPROXY=file://DIR) of
//	                                   the tags of vX.Y.Z, or of the working copy
//	showcase-release notes vX.Y.Z      CHANGELOG.md's section of vX.Y.Z, the release's notes
//	showcase-release env PROXY MODCACHE the variables (KEY=VALUE lines) of a go command
//	                                   that installs as a user would, from PROXY
//
// It runs at the repository's root.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/defectshowcase/showcase/tools/release"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "showcase-release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: showcase-release version|set VERSION|check|tag VERSION|notes VERSION|env PROXY MODCACHE|proxy DIR [VERSION]")
	}
	const root = "."
	switch args[0] {
	case "version":
		v, err := release.Version(root)
		if err == nil {
			fmt.Println(v)
		}
		return err
	case "set":
		if len(args) != 2 {
			return errors.New("usage: showcase-release set vX.Y.Z")
		}
		return release.SetVersion(root, args[1], true)
	case "check":
		return release.Check(root, os.Stdout)
	case "tag":
		if len(args) != 2 {
			return errors.New("usage: showcase-release tag vX.Y.Z")
		}
		tags, err := release.Tag(root, args[1])
		if err == nil {
			fmt.Println("git push origin " + strings.Join(tags, " "))
		}
		return err
	case "notes":
		if len(args) != 2 {
			return errors.New("usage: showcase-release notes vX.Y.Z")
		}
		data, err := os.ReadFile("CHANGELOG.md")
		if err != nil {
			return err
		}
		notes, err := release.Notes(data, args[1])
		if err == nil {
			fmt.Print(notes)
		}
		return err
	case "env":
		if len(args) != 3 {
			return errors.New("usage: showcase-release env PROXY-URL MODCACHE")
		}
		vars, err := release.GoVars(args[1], args[2])
		if err == nil {
			fmt.Println(strings.Join(vars, "\n"))
		}
		return err
	case "proxy":
		if len(args) < 2 || len(args) > 3 {
			return errors.New("usage: showcase-release proxy DIR [vX.Y.Z]")
		}
		p := release.Proxy{Dir: args[1]}
		if len(args) == 3 {
			return release.FromTags(p, root, args[2])
		}
		v, err := release.Version(root)
		if err != nil {
			return err
		}
		return release.FromWorkingCopy(p, root, v)
	}
	return fmt.Errorf("%q: want version, set, check, tag, notes, env or proxy", args[0])
}
