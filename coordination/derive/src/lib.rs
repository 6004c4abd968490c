//! `#[derive(Relabel)]` for splitbrain's `coordination` crate: a value relabels field by field.
//!
//! Use it through the `coordination` crate, which re-exports it beside the trait of the same name
//! (`coordination::relabel::Relabel`, or `coordination::prelude::*`); see the trait's documentation there.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Error, Fields, GenericParam, Ident, LitStr, Path, Result, parse_macro_input,
    parse_quote,
};

/// Derives `coordination::relabel::Relabel` field by field.
///
/// The value's image has every field's image, in declaration order: for a struct (named,
/// tuple or unit) its fields, for an enum the fields of the variant it is. Every field's type
/// must implement `Relabel`, but for a field marked `#[relabel(skip)]`, which holds no client
/// identity and no op or timer id and is cloned as it is. Every type parameter gets a
/// `Relabel` bound.
///
/// The generated code names the `coordination` crate `::coordination`; a crate that reaches it by another
/// path says so on the type: `#[relabel(crate = "splitbrain::coordination")]`.
#[proc_macro_derive(Relabel, attributes(relabel))]
pub fn derive_relabel(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    relabel(input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// The `Relabel` impl of `input`.
fn relabel(mut input: DeriveInput) -> Result<Tokens> {
    let krate = krate(&input)?;
    let name = &input.ident;
    let arms = match &input.data {
        Data::Struct(data) => vec![arm(&parse_quote!(Self), &data.fields, &krate)?],
        Data::Enum(data) => (data.variants.iter())
            .map(|variant| {
                let ident = &variant.ident;
                arm(&parse_quote!(Self::#ident), &variant.fields, &krate)
            })
            .collect::<Result<_>>()?,
        Data::Union(_) => {
            return Err(Error::new(
                input.span(),
                "Relabel cannot be derived for a union",
            ));
        }
    };
    for param in &mut input.generics.params {
        if let GenericParam::Type(param) = param {
            param.bounds.push(parse_quote!(#krate::relabel::Relabel));
        }
    }
    // An enum without variants has no value to match on: its reference has no arm.
    let scrutinee = match &input.data {
        Data::Enum(data) if data.variants.is_empty() => quote!(*self),
        _ => quote!(self),
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::relabel::Relabel for #name #ty_generics #where_clause {
            fn relabel(&self, map: &#krate::relabel::ClientMap) -> Self {
                match #scrutinee {
                    #(#arms)*
                }
            }
        }
    })
}

/// The match arm that maps a value of shape `fields`, built by `path`, to its image.
fn arm(path: &Path, fields: &Fields, krate: &Path) -> Result<Tokens> {
    let bindings: Vec<Ident> = (fields.iter().enumerate())
        .map(|(index, field)| match &field.ident {
            Some(ident) => format_ident!("__{}", ident.unraw()),
            None => format_ident!("__{}", index),
        })
        .collect();
    let images = (fields.iter().zip(&bindings))
        .map(|(field, binding)| {
            Ok(if skipped(field)? {
                quote!(::core::clone::Clone::clone(#binding))
            } else {
                quote!(#krate::relabel::Relabel::relabel(#binding, map))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let idents: Vec<_> = fields.iter().map(|field| &field.ident).collect();
    Ok(match fields {
        Fields::Named(_) => quote! {
            #path { #(#idents: #bindings),* } => #path { #(#idents: #images),* },
        },
        Fields::Unnamed(_) => quote! {
            #path(#(#bindings),*) => #path(#(#images),*),
        },
        Fields::Unit => quote!(#path => #path,),
    })
}

/// Whether `field` is marked `#[relabel(skip)]`.
fn skipped(field: &syn::Field) -> Result<bool> {
    let mut skip = false;
    each_relabel_option(&field.attrs, |meta| {
        if meta.path.is_ident("skip") {
            skip = true;
            Ok(())
        } else {
            Err(meta.error("expected `skip`"))
        }
    })?;
    Ok(skip)
}

/// The path of the `coordination` crate: `::coordination`, or the type's `#[relabel(crate = "...")]`.
fn krate(input: &DeriveInput) -> Result<Path> {
    let mut krate = parse_quote!(::coordination);
    each_relabel_option(&input.attrs, |meta| {
        if meta.path.is_ident("crate") {
            krate = meta.value()?.parse::<LitStr>()?.parse()?;
            Ok(())
        } else {
            Err(meta.error("expected `crate = \"...\"`"))
        }
    })?;
    Ok(krate)
}

/// Calls `option` on each option of every `#[relabel(...)]` attribute in `attrs`.
fn each_relabel_option(
    attrs: &[syn::Attribute],
    mut option: impl FnMut(syn::meta::ParseNestedMeta) -> Result<()>,
) -> Result<()> {
    (attrs.iter())
        .filter(|attr| attr.path().is_ident("relabel"))
        .try_for_each(|attr| attr.parse_nested_meta(&mut option))
}
