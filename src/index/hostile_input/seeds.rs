//! One realistic snippet per language, the material the mutations start from: classes,
//! functions, methods, imports, calls, nested blocks, strings and comments.

pub const PYTHON: &str = r#"#!/usr/bin/env python3
"""Order handling."""
import os.path
from collections import defaultdict as dd
from .models import User, Base


class Service(Base):
    """Registers users."""

    retries: int = 3

    def __init__(self, store: "Store") -> None:
        self.store = store
        self.seen = dd(list)

    @staticmethod
    def register(name: str, user: User = None) -> User:
        # Comment with 'quotes' and (brackets]
        if user is None:
            user = User(name.strip(), *[x for x in name if x], **{"k": 1})
        elif len(name) > 3:
            return lambda y: y.save().validate()
        try:
            os.path.join(name, f"{user!r:>10}")
        except (OSError, ValueError) as e:
            raise RuntimeError("bad") from e
        return user


async def main(argv=None):
    async with open(__file__) as f:
        await Service(None).register(f.read())
"#;

pub const TYPESCRIPT: &str = r#"import { Injectable } from "@core/di";
import * as path from "path";
import type { User } from "./models";

export interface Store<T> {
  get(id: string): Promise<T | undefined>;
}

/** Serves users. */
@Injectable()
export class UserService<T extends User> implements Store<T> {
  private cache = new Map<string, T>();

  constructor(private readonly store: Store<T>, public name = "users") {}

  async get(id: string): Promise<T | undefined> {
    const hit = this.cache.get(id) ?? (await this.store.get(id));
    if (!hit) {
      throw new Error(`missing ${id}`);
    }
    return hit as T;
  }
}

export enum Mode { Fast = 1, Slow = "slow" }
export type Handler = (req: Request) => void;
export const handler: Handler = (req) => path.join(req.url, "x");
namespace Inner { export function f<K>(k: K): K { return k; } }
"#;

pub const TSX: &str = r#"import React, { useState } from "react";
import { format } from "./format";

type Props = { items: string[]; onPick?: (x: string) => void };

/** A list that remembers its selection. */
export function List({ items, onPick }: Props) {
  const [picked, setPicked] = useState<string | null>(null);
  const render = (x: string) => (
    <li key={x} className={x === picked ? "on" : "off"} onClick={() => { setPicked(x); onPick?.(x); }}>
      {format(x)} {/* comment */}
    </li>
  );
  return <ul>{items.map(render)}</ul>;
}

export default class Panel extends React.Component<Props> {
  state = { open: false };

  toggle = () => this.setState({ open: !this.state.open });

  render() {
    return (
      <div onClick={this.toggle}>
        {this.state.open && <List items={this.props.items} />}
      </div>
    );
  }
}
"#;

pub const JAVASCRIPT: &str = r#"'use strict';
const fs = require("fs");
import { join } from "path";
import Default, * as util from "./util.js";

/**
 * Reads a config.
 */
export async function load(file, { encoding = "utf8" } = {}) {
  const text = await fs.promises.readFile(join(__dirname, file), encoding);
  return JSON.parse(text);
}

class Cache extends Map {
  #hits = 0;
  static create() { return new Cache(); }
  get(key) {
    this.#hits++;
    return super.get(key) ?? util.miss(key, `k=${key}`);
  }
}

const handler = function named(evt) {
  for (const [k, v] of Object.entries(evt)) {
    if (/^x+$/.test(k)) { console.log(k, v); } else { label: while (true) break label; }
  }
};
module.exports = { load, Cache, handler: (x) => handler(x) };
"#;

pub const GO: &str = r#"// Package shop sells things.
package shop

import (
	"fmt"
	str "strings"
)

// Item is for sale.
type Item struct {
	Name  string `json:"name"`
	Price float64
}

type Pricer interface {
	Price(i *Item) float64
}

// Total adds prices.
func (c *Cart) Total(p Pricer) (sum float64, err error) {
	for _, it := range c.items {
		if it == nil {
			continue
		}
		sum += p.Price(it)
	}
	defer func() { recover() }()
	go fmt.Println(str.ToUpper("done"), sum)
	switch x := interface{}(c).(type) {
	case *Cart:
		_ = x
	}
	return sum, nil
}

const Max = 10
var cache = map[string]*Item{"a": {Name: "a"}}
"#;

pub const RUST: &str = r##"//! Orders.
use std::collections::HashMap;
use crate::store::{Store, self as st};

/// An order.
#[derive(Debug, Clone)]
pub struct Order<'a, T: Clone> {
    id: u64,
    items: Vec<&'a T>,
}

pub trait Priced { fn price(&self) -> f64; }

impl<'a, T: Clone + Priced> Order<'a, T> {
    /// Sum of prices.
    pub fn total(&self) -> f64 {
        self.items.iter().map(|i| i.price()).sum::<f64>()
    }

    pub async fn save(&mut self, s: &mut impl Store) -> Result<(), st::Error> {
        let mut m: HashMap<u64, String> = HashMap::new();
        m.insert(self.id, format!("{:?}", self.id));
        if let Some(x) = m.get(&1) { println!("{x}"); } else { s.put(m)?; }
        match self.id { 0 => Ok(()), n if n > 3 => Err(st::Error::new("big")), _ => unreachable!() }
    }
}

macro_rules! twice { ($e:expr) => { $e; $e }; }
const LIMIT: usize = 1 << 10;
mod inner { pub fn helper() -> &'static str { r#"raw "str""# } }
"##;

pub const JAVA: &str = r#"package com.shop;

import java.util.List;
import java.util.*;
import static java.lang.Math.max;

/** A cart. */
@Entity
public class Cart<T extends Item> extends Base implements Priced, Comparable<Cart<T>> {
    private final List<T> items = new ArrayList<>();

    public Cart(String name) { super(name); }

    @Override
    public double price() {
        double sum = 0;
        for (T it : items) {
            sum += it.price() * max(1, it.count);
        }
        return sum;
    }

    static class Line { int n; }

    public <R> R map(java.util.function.Function<Cart<T>, R> f) throws Exception {
        try { return f.apply(this); } catch (IllegalStateException | NullPointerException e) { throw e; }
    }

    enum Kind { A, B; void go() { System.out.println("x" + this); } }
    interface Visitor { void visit(Cart<?> c); }
}
"#;

pub const C: &str = r#"#include <stdio.h>
#include "cart.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A line of a cart. */
struct line {
    const char *name;
    int count;
    struct line *next;
};

typedef int (*pricer)(const struct line *);
enum kind { KIND_A, KIND_B = 3 };
static int total(const struct line *l, pricer p);

// Sums the cart.
static int total(const struct line *l, pricer p)
{
    int sum = 0;
    for (; l != NULL; l = l->next) {
        if (l->count > 0) {
            sum += MAX(p(l), 0) * l->count;
        } else {
            printf("skip %s\n", l->name);
        }
    }
    return sum;
}

int main(int argc, char **argv) { struct line l = { "a", 1, 0 }; return total(&l, 0); }
"#;

pub const CPP: &str = r#"#include <memory>
#include <vector>
#include "shop/item.hpp"

namespace shop {
namespace detail { int helper(int x) { return x * 2; } }

/// A cart of items.
template <typename T>
class Cart : public Base, private Priced {
public:
    explicit Cart(std::string name) : name_(std::move(name)) {}
    virtual ~Cart() = default;

    double total() const override {
        double sum = 0;
        for (const auto &it : items_) {
            sum += it->price() * detail::helper(it->count);
        }
        auto add = [this](int x) -> int { return x + items_.size(); };
        return sum + add(1);
    }

private:
    std::vector<std::unique_ptr<T>> items_;
    std::string name_;
};

double Cart<int>::price() const { return std::make_unique<Item>("a")->price(); }
}  // namespace shop
using namespace shop;
"#;

pub const CSHARP: &str = r#"using System;
using System.Collections.Generic;
using Alias = System.Text.StringBuilder;

namespace Shop.Core
{
    /// <summary>A cart.</summary>
    [Serializable]
    public class Cart<T> : Base, IPriced where T : Item
    {
        private readonly List<T> items = new List<T>();
        public string Name { get; set; } = "cart";

        public Cart(string name) : base(name) { }

        public double Price()
        {
            double sum = 0;
            foreach (var it in items)
            {
                sum += it.Price() * Math.Max(1, it.Count);
            }
            Func<int, int> twice = x => x * 2;
            return sum + twice(items.Count);
        }

        public async Task<T> FirstAsync() => await Task.FromResult(items[0]);
    }

    public interface IPriced { double Price(); }
    public enum Kind { A, B }
    public record Line(string Name, int Count);
}
"#;

pub const RUBY: &str = r#"# frozen_string_literal: true
require "json"
require_relative "base"

module Shop
  # A cart.
  class Cart < Base
    include Comparable
    attr_reader :items

    def initialize(name)
      super(name)
      @items = []
    end

    def total
      @items.sum { |it| it.price * [1, it.count].max }
    end

    def self.load(path)
      data = JSON.parse(File.read(path))
      new(data["name"]).tap do |c|
        data["items"].each { |i| c.items << Item.new(**i) }
      end
    rescue JSON::ParserError => e
      warn "bad #{path}: #{e.message}"
    end

    private

    def helper(x) = x * 2
  end
end
"#;

pub const PHP: &str = r#"<?php
declare(strict_types=1);

namespace App\Shop;

use App\Util\Money;
use function App\Util\format_total as fmt;

/**
 * A cart.
 */
#[Entity]
final class Cart extends BaseCart implements Priced
{
    use Countable;

    private array $items = [];

    public function __construct(private string $name = "cart") {}

    public function total(): float
    {
        $sum = 0.0;
        foreach ($this->items as $k => $it) {
            $sum += $it->price() * max(1, $it->count);
        }
        $m = new Money($sum);
        return fmt($m, fn($x) => $x * 2, static::class);
    }
}

function helper(int $x): int { return $x . "?>" ; }
interface Priced { public function total(): float; }
"#;

pub const KOTLIN: &str = r#"package com.shop

import kotlin.math.max
import com.shop.util.Money as M

/** A cart. */
@Serializable
data class Cart<T : Item>(val name: String, private val items: MutableList<T> = mutableListOf()) : Base(name), Priced {
    companion object {
        const val LIMIT = 10
        fun empty() = Cart<Item>("empty")
    }

    override fun price(): Double {
        var sum = 0.0
        for (it in items) {
            sum += it.price() * max(1, it.count)
        }
        val twice: (Int) -> Int = { x -> x * 2 }
        return sum + twice(items.size).also { println("total $it ${name.length}") }
    }

    suspend fun <R> map(f: (Cart<T>) -> R): R = f(this)
}

interface Priced { fun price(): Double }
enum class Kind { A, B }
object Registry { val carts = HashMap<String, Cart<*>>() }
fun Cart<*>.describe(): String = when { name.isEmpty() -> "?"; else -> name }
"#;

pub const SWIFT: &str = r#"import Foundation
import struct Shop.Item

/// A cart.
@available(macOS 10.15, *)
public final class Cart<T: Item>: Base, Priced {
    private var items: [T] = []
    let name: String

    init(name: String) {
        self.name = name
        super.init()
    }

    func price() -> Double {
        var sum = 0.0
        for it in items where it.count > 0 {
            sum += it.price() * Double(max(1, it.count))
        }
        let twice = { (x: Int) -> Int in x * 2 }
        return sum + Double(twice(items.count))
    }

    static func load(_ path: String) throws -> Cart<T>? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try JSONDecoder().decode(Cart<T>.self, from: data)
    }
}

protocol Priced { func price() -> Double }
enum Kind: String { case a = "a", b }
extension Cart { var isEmpty: Bool { items.isEmpty } }
"#;

pub const SCALA: &str = r#"package com.shop

import scala.collection.mutable
import com.shop.util.{Money, Format => F}

/** A cart. */
@SerialVersionUID(1L)
class Cart[T <: Item](val name: String) extends Base(name) with Priced {
  private val items = mutable.ListBuffer.empty[T]

  override def price: Double = {
    var sum = 0.0
    for (it <- items if it.count > 0) {
      sum += it.price * math.max(1, it.count)
    }
    val twice = (x: Int) => x * 2
    sum + twice(items.size)
  }

  def map[R](f: Cart[T] => R): R = f(this)
}

object Cart {
  def apply[T <: Item](name: String): Cart[T] = new Cart[T](name)
  implicit val ordering: Ordering[Cart[_]] = Ordering.by(_.name)
}

trait Priced { def price: Double }
case class Line(name: String, count: Int) { def describe = s"$name x $count" }
sealed abstract class Kind
"#;

pub const LUA: &str = r#"-- A cart module.
local json = require("json")
local M = {}
M.__index = M

--- Creates a cart.
function M.new(name)
  local self = setmetatable({ name = name, items = {} }, M)
  return self
end

function M:total()
  local sum = 0
  for i, it in ipairs(self.items) do
    if it.count > 0 then
      sum = sum + it:price() * math.max(1, it.count)
    elseif it.count == nil then
      error("bad item " .. tostring(i))
    end
  end
  return sum
end

local function helper(x)
  return function(y) return x * y end
end

M.load = function(path)
  local f = assert(io.open(path, "r"))
  local data = json.decode(f:read("*a")) --[[ long
  comment ]]
  return M.new(data.name), [[long string]]
end

return M
"#;

pub const ELIXIR: &str = r#"defmodule Shop.Cart do
  @moduledoc """
  A cart.
  """
  use GenServer
  alias Shop.{Item, Money}
  import Enum, only: [map: 2]
  require Logger

  defstruct name: "cart", items: []

  @doc "Sum of prices."
  @spec total(t()) :: float()
  def total(%__MODULE__{items: items}) do
    items
    |> map(fn it -> Item.price(it) * max(1, it.count) end)
    |> Enum.sum()
  end

  def add(cart, item) when is_map(item) do
    case Money.check(item) do
      {:ok, m} -> %{cart | items: [m | cart.items]}
      {:error, reason} -> Logger.warn("bad #{inspect(reason)}")
    end
  end

  defp helper(x), do: x * 2

  defmacro twice(e) do
    quote do: unquote(e) + unquote(e)
  end
end
"#;

pub const BASH: &str = r#"#!/usr/bin/env bash
# Builds the shop.
set -euo pipefail
source ./lib.sh
. "$(dirname "$0")/env.sh"

readonly OUT="${OUT:-build}"

# Compiles one target.
build_one() {
  local target="$1"
  if [[ -z "$target" ]]; then
    echo "no target" >&2
    return 1
  elif [ "$target" = all ]; then
    for t in a b c; do build_one "$t"; done
  fi
  case "$target" in
    *.c) gcc -o "$OUT/${target%.c}" "$target" ;;
    *) cp "$target" "$OUT/" ;;
  esac
  cat <<EOF > "$OUT/log"
built $target at $(date)
EOF
}

function main {
  mkdir -p "$OUT"
  while read -r line; do build_one "$line" | tee -a "$OUT/all.log"; done < targets.txt
  echo $(( $(wc -l < targets.txt) * 2 ))
}

main "$@"
"#;
