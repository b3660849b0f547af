package modeltest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cordisgo/harness/internal/modeltest"
)

// A server answers scripted replies in DeepSeek's format and refuses what DeepSeek refuses.
// In a test, modeltest.New(t, …) also fails the test on any unexpected rejection.
func Example() {
	srv := modeltest.NewServer(modeltest.Options{Replies: []modeltest.Reply{
		{Reasoning: "A greeting.", Content: "Hello!"},
	}})
	defer srv.Close()

	send := func(body string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	status, b := send(`{"model":"deepseek-chat","messages":[{"role":"user","content":"hi"}]}`)
	fmt.Println(status, strings.TrimSpace(string(b)))

	_, b = send(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}]}`)
	var out struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				Reasoning string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
	}
	_ = json.Unmarshal(b, &out)
	fmt.Printf("%q %q\n", out.Choices[0].Message.Reasoning, out.Choices[0].Message.Content)
	fmt.Println(len(srv.Requests()), "requests,", len(srv.Accepted()), "accepted")
	// Output:
	// 400 {"error":{"message":"The supported API model names are deepseek-v4-pro or deepseek-v4-flash, but you passed deepseek-chat.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}
	// "A greeting." "Hello!"
	// 2 requests, 1 accepted
}
